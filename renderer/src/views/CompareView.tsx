// PLACEHOLDER written by the app helper so navigation works; the models helper replaces this view.
export function CompareView() {
  return (
    <div className="page">
      <div className="page-head">
        <h1>Compare</h1>
      </div>
      <div className="card empty">This view is not built yet.</div>
    </div>
  );
}
