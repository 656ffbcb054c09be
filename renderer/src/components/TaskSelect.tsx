// The task chooser the run forms share: every loaded task by name and id.
import { useStore } from '../store';

export function TaskSelect(props: { value: string; onChange(taskId: string): void; testId: string }) {
  const tasks = useStore((s) => s.tasks);
  return (
    <label className="field">
      <span>Task</span>
      <select value={props.value} onChange={(e) => props.onChange(e.target.value)} data-testid={props.testId}>
        {tasks.map((t) => (
          <option key={t.task.id} value={t.task.id}>
            {t.task.name} ({t.task.id})
          </option>
        ))}
      </select>
    </label>
  );
}
