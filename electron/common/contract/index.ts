// The one API contract: every method and every streamed event of TATRA Studio.
// Domain files (tasks, classify, jobs, models, settings) each export `<domain>Methods` and
// `<domain>Events`; this file only combines them.
// OWNER: the app helper (H4); models.ts is owned by the models helper (H5).
export * from './define';
