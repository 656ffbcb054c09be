// How sure a vote must be before its remaining runs are skipped: exactly decided (the same label
// as every run, fewer calls) or, opt-in, sure enough at a stated level (docs/method.md §10 and the
// README's "Early decision"). Shown beside each view's "Stop once decided" checkbox.
import { EARLY_STOP_CONFIDENCE, confidentStopPromise } from '../../../electron/common/settings';
import type { TatraSettings } from '../../../electron/common/tatra';

const HELP =
  'Exactly decided: the rest of the runs could not change the winner, so the label is the one every run would give. ' +
  `Sure at P: fewer calls, and now and then another label: ${confidentStopPromise()}.`;

export function EarlyStopRule({ value, onChange, disabled, testId }: { value: TatraSettings; onChange: (next: TatraSettings) => void; disabled?: boolean; testId: string }) {
  const p = value.earlyStopConfidence ?? 1;
  return (
    <label className="field inline" title={HELP}>
      <span className="sr-only">How sure</span>
      <select
        value={String(p)}
        disabled={disabled}
        data-testid={testId}
        aria-label="Stop when the vote is"
        onChange={(e) => {
          const next = Number(e.target.value);
          const { earlyStopConfidence: _drop, ...rest } = value;
          onChange(next >= 1 ? rest : { ...rest, earlyStopConfidence: next });
        }}
      >
        <option value="1">exactly decided</option>
        {[...EARLY_STOP_CONFIDENCE.choices].reverse().map((c) => (
          <option key={c} value={String(c)}>
            {`${Math.round(c * 100)}% sure`}
          </option>
        ))}
      </select>
    </label>
  );
}
