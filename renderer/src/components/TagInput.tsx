// A list of short strings (style rules, topics): Enter or comma adds, Backspace on empty removes.
import { useState } from 'react';

export function TagInput(props: { value: string[]; onChange(v: string[]): void; placeholder?: string; label: string; testId?: string; invalid?: boolean }) {
  const [text, setText] = useState('');
  const add = () => {
    const parts = text
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0 && !props.value.includes(s));
    if (parts.length > 0) props.onChange([...props.value, ...parts]);
    setText('');
  };
  return (
    <div className="tag-input" data-testid={props.testId}>
      {props.value.map((t, i) => (
        <span className="tag" key={`${t}-${i}`}>
          {t}
          <button type="button" aria-label={`Remove ${t}`} onClick={() => props.onChange(props.value.filter((_, j) => j !== i))}>
            ×
          </button>
        </span>
      ))}
      <input
        type="text"
        aria-label={props.label}
        aria-invalid={props.invalid === true}
        value={text}
        placeholder={props.value.length === 0 ? props.placeholder : ''}
        onChange={(e) => setText(e.target.value)}
        onBlur={add}
        onKeyDown={(e) => {
          if (e.key === 'Enter' || e.key === ',') {
            e.preventDefault();
            add();
          } else if (e.key === 'Backspace' && text === '' && props.value.length > 0) {
            props.onChange(props.value.slice(0, -1));
          }
        }}
      />
    </div>
  );
}
