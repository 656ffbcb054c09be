// PLACEHOLDER written by the app helper so navigation works; the models helper replaces this view.
export function ModelsView() {
  return (
    <div className="page">
      <div className="page-head">
        <h1>Models</h1>
      </div>
      <div className="card empty">This view is not built yet.</div>
    </div>
  );
}
