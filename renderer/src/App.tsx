// The shell of the page: navigation, theme, notices, and the view for the current route.
import { Suspense, useEffect } from 'react';
import { splitView as view } from './components/splitView';
import { Notices } from './components/Common';
import { count } from './components/labels';
import { NavIcon } from './components/NavIcon';
import { connectStore, useStore } from './store';
import { parseHash, type ThemeChoice, type ViewName, VIEWS } from './store/uiSlice';

// Each view is its own script: the first page paints without the code (and the charts) of the five
// others, which are fetched once the page is idle (prefetchViews), so opening one later does not
// wait on the network and the parse (about 300 ms of a job page's first opening in Chromium here).
const viewScripts = {
  tasks: view(() => import('./views/TasksView').then((m) => m.TasksView)),
  classify: view(() => import('./views/ClassifyView').then((m) => m.ClassifyView)),
  evaluate: view(() =>
    import('./views/EvaluateView').then((m) => {
      void m.prefetchEvaluateParts().catch(() => undefined);
      return m.EvaluateView;
    }),
  ),
  models: view(() => import('./views/ModelsView').then((m) => m.ModelsView)),
  experiment: view(() => import('./views/experiment/ExperimentView').then((m) => m.ExperimentView)),
};
const TasksView = viewScripts.tasks.View;
const ClassifyView = viewScripts.classify.View;
const EvaluateView = viewScripts.evaluate.View;
const ModelsView = viewScripts.models.View;
const ExperimentView = viewScripts.experiment.View;

/** Fetches every view's script once the page is idle; a view opened before then fetches its own. */
function usePrefetchViews() {
  useEffect(() => {
    const fetchAll = () => {
      // Only a head start: a script that fails to come here is fetched again when its view opens.
      for (const { fetch } of Object.values(viewScripts)) void fetch().catch(() => undefined);
    };
    if (typeof window.requestIdleCallback === 'function') {
      const handle = window.requestIdleCallback(fetchAll, { timeout: 2000 });
      return () => window.cancelIdleCallback(handle);
    }
    const timer = setTimeout(fetchAll, 500);
    return () => clearTimeout(timer);
  }, []);
}

const TITLES: Record<ViewName, string> = {
  tasks: 'Tasks',
  classify: 'Classify',
  evaluate: 'Evaluate',
  models: 'Models',
  compare: 'Compare',
  sweep: 'Sweep',
};

function useTheme(theme: ThemeChoice) {
  useEffect(() => {
    const media = window.matchMedia?.('(prefers-color-scheme: dark)');
    const apply = () => {
      const dark = theme === 'dark' || (theme === 'system' && media?.matches);
      document.documentElement.dataset.theme = dark ? 'dark' : 'light';
      useStore.setState({ resolvedTheme: dark ? 'dark' : 'light' });
    };
    apply();
    media?.addEventListener?.('change', apply);
    return () => media?.removeEventListener?.('change', apply);
  }, [theme]);
}

/** Connects the store to the host, loads what every view needs, and follows the hash and the Alt+N keys. */
function useStoreConnection() {
  useEffect(() => {
    const stop = connectStore();
    const s = useStore.getState();
    void s.loadSettings();
    void s.loadTasks();
    void s.loadJobs();
    void s.restoreClassify();
    void s.restoreDraft();
    // Review decisions a closed or reloaded page had not got saved yet.
    void s.flushReviewOps();
    const onHash = () => useStore.setState({ route: parseHash(window.location.hash) });
    window.addEventListener('hashchange', onHash);
    // Alt+1…6 switch views from anywhere, including inside a text field.
    const onKey = (e: KeyboardEvent) => {
      if (!e.altKey || e.ctrlKey || e.metaKey) return;
      const i = Number(e.key) - 1;
      const view = VIEWS[i];
      if (view) {
        e.preventDefault();
        useStore.getState().navigate({ view });
      }
    };
    window.addEventListener('keydown', onKey);
    return () => {
      stop();
      window.removeEventListener('hashchange', onHash);
      window.removeEventListener('keydown', onKey);
    };
  }, []);
}

export function App() {
  const route = useStore((s) => s.route);
  const navigate = useStore((s) => s.navigate);
  const theme = useStore((s) => s.theme);
  const setTheme = useStore((s) => s.setTheme);
  const connected = useStore((s) => s.connected);
  const appInfo = useStore((s) => s.appInfo);
  const collapsed = useStore((s) => s.sidebarCollapsed);
  const toggleSidebar = useStore((s) => s.toggleSidebar);
  useTheme(theme);

  useStoreConnection();
  usePrefetchViews();

  useEffect(() => {
    document.title = `${TITLES[route.view]} · TATRA Studio`;
  }, [route.view]);

  return (
    <div className={collapsed ? 'app collapsed' : 'app'}>
      <nav className="sidebar" aria-label="Main">
        <div className="brand" title="TATRA Studio">
          <strong>{collapsed ? 'T' : 'TATRA'}</strong>
          {collapsed ? null : <span>Studio</span>}
        </div>
        {VIEWS.map((v, i) => (
          <button
            key={v}
            className="nav-item"
            aria-current={route.view === v ? 'page' : undefined}
            aria-label={collapsed ? TITLES[v] : undefined}
            title={collapsed ? `${TITLES[v]} (Alt+${i + 1})` : undefined}
            onClick={() => navigate({ view: v })}
            data-testid={`nav-${v}`}
          >
            <NavIcon view={v} />
            <span className="nav-name">{TITLES[v]}</span>
            <kbd>Alt+{i + 1}</kbd>
          </button>
        ))}
        <div className="sidebar-foot">
          <label className="field hide-collapsed">
            <span className="hide-narrow">Theme</span>
            <select value={theme} onChange={(e) => setTheme(e.target.value as ThemeChoice)} aria-label="Theme" data-testid="theme">
              <option value="system">System</option>
              <option value="light">Light</option>
              <option value="dark">Dark</option>
            </select>
          </label>
          <span className="conn" title={connected ? 'Live updates connected' : 'Live updates disconnected; reconnecting'}>
            <span className={`dot ${connected ? '' : 'off'}`} />
            <span className="hide-narrow">{connected ? 'Connected' : 'Reconnecting…'}</span>
          </span>
          {appInfo ? (
            <span className="xs hide-narrow" title={appInfo.dataDir}>
              v{appInfo.version} · {appInfo.mode} · {count(appInfo.threads, 'thread')}
            </span>
          ) : null}
          <button className="btn ghost small sidebar-toggle" onClick={toggleSidebar} aria-expanded={!collapsed} title={collapsed ? 'Expand the sidebar' : 'Collapse the sidebar to icons'} data-testid="sidebar-toggle">
            <span aria-hidden="true">{collapsed ? '»' : '«'}</span>
            {collapsed ? <span className="sr-only">Expand the sidebar</span> : <span>Collapse</span>}
          </button>
        </div>
      </nav>
      <main className="main">
        <Suspense fallback={<p className="muted" data-testid="view-loading">Loading…</p>}>
          {route.view === 'tasks' && <TasksView />}
          {route.view === 'classify' && <ClassifyView />}
          {route.view === 'evaluate' && <EvaluateView />}
          {route.view === 'models' && <ModelsView />}
          {(route.view === 'compare' || route.view === 'sweep') && <ExperimentView kind={route.view} />}
        </Suspense>
      </main>
      <Notices />
    </div>
  );
}
