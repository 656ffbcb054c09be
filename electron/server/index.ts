// Browser mode: the renderer and the API contract over HTTP + WebSocket, token- and Origin-guarded.
export { startServer, safeFileName, type ServeOptions, type RunningServer } from './server';
export {
  newToken,
  cookieName,
  parseCookies,
  tokensEqual,
  tokenSource,
  allowedOrigins,
  originAllowed,
  isLoopbackHost,
  isWildcardHost,
  contentSecurityPolicy,
  SECURITY_HEADERS,
  TOKEN_HEADER,
  TOKEN_QUERY,
} from './auth';
