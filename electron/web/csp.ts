// The one Content-Security-Policy of the renderer, whichever face serves it (Electron's app://
// protocol or `tatra serve`). No 'unsafe-eval' and no inline script anywhere. style-src is 'self'
// only: the Vite build emits CSS files, and React writes `style` props through the CSSOM, which
// CSP does not govern; if a library ever injects <style> tags the page shows unstyled parts,
// which the e2e tests (no CSP violation allowed) would catch.

export const CSP_DIRECTIVES: Readonly<Record<string, readonly string[]>> = Object.freeze({
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'font-src': ["'self'"],
  'connect-src': ["'self'"],
  'object-src': ["'none'"],
  'frame-src': ["'none'"],
  'worker-src': ["'none'"],
  'base-uri': ["'none'"],
  'frame-ancestors': ["'none'"],
  'form-action': ["'none'"],
});

/** The Content-Security-Policy header value built from CSP_DIRECTIVES. */
export const CONTENT_SECURITY_POLICY = Object.entries(CSP_DIRECTIVES)
  .map(([name, sources]) => `${name} ${sources.join(' ')}`)
  .join('; ');
