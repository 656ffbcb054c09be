// Navigation (hash routes, so a reload lands on the same view and job), theme, notices and the
// connection state of the event stream.
import type { SliceCreator } from './types';

export type ViewName = 'tasks' | 'classify' | 'evaluate' | 'models' | 'compare' | 'sweep';
export const VIEWS: readonly ViewName[] = ['tasks', 'classify', 'evaluate', 'models', 'compare', 'sweep'];

export interface Route {
  view: ViewName;
  /** Evaluate: the job shown; Tasks: the task open in the editor; Sweep: the sweep shown. */
  id?: string;
  /** A page of the one shown: Evaluate's `review` (the job's review queue). */
  sub?: 'review';
}

export type ThemeChoice = 'system' | 'light' | 'dark';

export interface Notice {
  id: number;
  kind: 'error' | 'info' | 'success';
  message: string;
}

export interface UiSlice {
  route: Route;
  navigate(route: Route): void;
  theme: ThemeChoice;
  setTheme(theme: ThemeChoice): void;
  /** The theme on screen: the choice, or the system's when the choice is "system" (charts redraw on it). */
  resolvedTheme: 'light' | 'dark';
  notices: Notice[];
  notify(kind: Notice['kind'], message: string): void;
  dismiss(id: number): void;
  connected: boolean;
  setConnected(connected: boolean): void;
  /** The sidebar folded to a rail of icons (more room on a narrow window); kept per browser. */
  sidebarCollapsed: boolean;
  toggleSidebar(): void;
}

const SIDEBAR_KEY = 'tatra.sidebarCollapsed';

export function parseHash(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const view = (VIEWS as readonly string[]).includes(parts[0] ?? '') ? (parts[0] as ViewName) : 'classify';
  if (!parts[1]) return { view };
  return parts[2] === 'review' ? { view, id: parts[1], sub: 'review' } : { view, id: parts[1] };
}

export function formatHash(route: Route): string {
  return `#/${route.view}${route.id ? `/${encodeURIComponent(route.id)}${route.sub ? `/${route.sub}` : ''}` : ''}`;
}

let nextNotice = 1;

export const createUiSlice: SliceCreator<UiSlice> = (set, get) => ({
  route: typeof window === 'undefined' ? { view: 'classify' } : parseHash(window.location.hash),
  navigate(route) {
    set({ route });
    if (typeof window !== 'undefined' && window.location.hash !== formatHash(route)) window.location.hash = formatHash(route);
  },
  theme: 'system',
  resolvedTheme: 'light',
  setTheme(theme) {
    set({ theme });
    void get().updateSettings({ theme });
  },
  notices: [],
  notify(kind, message) {
    const id = nextNotice++;
    // The same message twice in a row is one notice: a failing poll should not flood the screen.
    if (get().notices.some((n) => n.message === message)) return;
    set({ notices: [...get().notices, { id, kind, message }].slice(-4) });
    if (kind !== 'error') setTimeout(() => get().dismiss(id), 4000);
  },
  dismiss(id) {
    set({ notices: get().notices.filter((n) => n.id !== id) });
  },
  connected: true,
  setConnected(connected) {
    set({ connected });
  },
  sidebarCollapsed: typeof localStorage !== 'undefined' && localStorage.getItem(SIDEBAR_KEY) === '1',
  toggleSidebar() {
    const sidebarCollapsed = !get().sidebarCollapsed;
    set({ sidebarCollapsed });
    localStorage.setItem(SIDEBAR_KEY, sidebarCollapsed ? '1' : '0');
  },
});
