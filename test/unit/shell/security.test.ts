// The shell's security settings are data: these tests pin them so a refactor cannot quietly
// weaken the window (Electron's security checklist) or the CSP.
import { describe, expect, it } from 'vitest';
import {
  APP_ENTRY_URL,
  isAllowedNavigation,
  isAllowedSender,
  isPermissionAllowed,
  isSafeExternalUrl,
  webPreferencesFor,
} from '../../../electron/security';
import { CONTENT_SECURITY_POLICY, CSP_DIRECTIVES } from '../../../electron/web/csp';
import { SECURITY_HEADERS } from '../../../electron/web/headers';

function cspMap(policy: string): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const part of policy.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name) {
      expect(map.has(name), `directive ${name} appears twice`).toBe(false);
      map.set(name, sources);
    }
  }
  return map;
}

describe('webPreferencesFor', () => {
  const prefs = webPreferencesFor('/app/dist/electron/preload.cjs');

  it('isolates, sandboxes and keeps Node out of the renderer', () => {
    expect(prefs.preload).toBe('/app/dist/electron/preload.cjs');
    expect(prefs.contextIsolation).toBe(true);
    expect(prefs.sandbox).toBe(true);
    expect(prefs.nodeIntegration).toBe(false);
    expect(prefs.nodeIntegrationInWorker).toBe(false);
    expect(prefs.nodeIntegrationInSubFrames).toBe(false);
  });

  it('keeps web security on and the risky features off', () => {
    expect(prefs.webSecurity).toBe(true);
    expect(prefs.allowRunningInsecureContent).toBe(false);
    expect(prefs.webviewTag).toBe(false);
    expect(prefs.experimentalFeatures).toBe(false);
    expect(prefs.spellcheck).toBe(false);
    expect(prefs.navigateOnDragDrop).toBe(false);
    expect(prefs.enableBlinkFeatures).toBeUndefined();
  });

  it('enables devtools only when asked (development)', () => {
    expect(prefs.devTools).toBe(false);
    expect(webPreferencesFor('/p.cjs', { devTools: true }).devTools).toBe(true);
    // The security switches do not depend on the development flag.
    const dev = webPreferencesFor('/p.cjs', { devTools: true });
    expect({ ...dev, devTools: false, preload: prefs.preload }).toEqual(prefs);
  });
});

describe('Content-Security-Policy', () => {
  const csp = cspMap(CONTENT_SECURITY_POLICY);

  it('allows scripts only from the app itself, never eval or inline', () => {
    expect(csp.get('default-src')).toEqual(["'self'"]);
    expect(csp.get('script-src')).toEqual(["'self'"]);
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-eval');
    expect(csp.get('script-src')).not.toContain("'unsafe-inline'");
    expect(CONTENT_SECURITY_POLICY).not.toContain('*');
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/https?:/);
  });

  it('locks down objects, base, framing, forms and connections', () => {
    expect(csp.get('object-src')).toEqual(["'none'"]);
    expect(csp.get('base-uri')).toEqual(["'none'"]);
    expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
    expect(csp.get('form-action')).toEqual(["'none'"]);
    expect(csp.get('connect-src')).toEqual(["'self'"]);
    expect(csp.get('img-src')).toEqual(["'self'", 'data:']);
    expect(csp.get('style-src')).toEqual(["'self'"]);
  });

  it('is built from the directive table and sent with the hardening headers', () => {
    expect(csp.size).toBe(Object.keys(CSP_DIRECTIVES).length);
    expect(SECURITY_HEADERS['Content-Security-Policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(SECURITY_HEADERS['X-Content-Type-Options']).toBe('nosniff');
  });
});

describe('isAllowedSender', () => {
  it('accepts the app origin only', () => {
    expect(isAllowedSender(APP_ENTRY_URL)).toBe(true);
    expect(isAllowedSender('app://tatra/')).toBe(true);
    expect(isAllowedSender('app://tatra/index.html#/evaluate')).toBe(true);
  });

  it.each([
    'file:///work/main/dist/renderer/index.html',
    'http://evil.example/',
    'https://tatra/',
    'http://127.0.0.1:5173/',
    'devtools://devtools/bundled/inspector.html',
    'chrome-extension://abc/index.html',
    'app://evil/index.html',
    'app://tatra.evil.example/',
    'app://tatra:8080/',
    'app://user:pass@tatra/',
    'about:blank',
    'data:text/html,<script>1</script>',
    'javascript:alert(1)',
    '',
    'not a url',
  ])('refuses %s', (url) => {
    expect(isAllowedSender(url)).toBe(false);
  });

  it('refuses a missing frame URL', () => {
    expect(isAllowedSender(null)).toBe(false);
    expect(isAllowedSender(undefined)).toBe(false);
  });
});

describe('navigation and links', () => {
  it('allows routes inside the app and nothing else', () => {
    expect(isAllowedNavigation('app://tatra/index.html')).toBe(true);
    expect(isAllowedNavigation('https://example.com/')).toBe(false);
    expect(isAllowedNavigation('file:///etc/passwd')).toBe(false);
    expect(isAllowedNavigation('app://other/index.html')).toBe(false);
    expect(isAllowedNavigation('about:blank')).toBe(false);
  });

  it('hands only plain http(s) links to the system browser', () => {
    expect(isSafeExternalUrl('https://huggingface.co/Qwen/Qwen2.5-7B-Instruct-GGUF')).toBe(true);
    expect(isSafeExternalUrl('http://example.com/a?b=c')).toBe(true);
    expect(isSafeExternalUrl('file:///bin/sh')).toBe(false);
    expect(isSafeExternalUrl('javascript:alert(1)')).toBe(false);
    expect(isSafeExternalUrl('smb://host/share')).toBe(false);
    expect(isSafeExternalUrl('ms-msdt:/id PCWDiagnostic')).toBe(false);
    expect(isSafeExternalUrl('https://user:pw@example.com/')).toBe(false);
    expect(isSafeExternalUrl(`https://example.com/${'a'.repeat(3000)}`)).toBe(false);
  });

  it('refuses every permission', () => {
    for (const p of ['media', 'notifications', 'geolocation', 'clipboard-read', 'clipboard-sanitized-write', 'openExternal', 'fullscreen']) {
      expect(isPermissionAllowed(p)).toBe(false);
    }
  });
});
