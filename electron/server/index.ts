// Browser mode: the renderer and the API contract over HTTP + WebSocket, token- and Origin-guarded.
export { startServer, type ServeOptions, type RunningServer } from './server';
export {
  newToken,
  cookieName,
  tokenCookie,
  tokensEqual,
  tokenSource,
  allowedOrigins,
  originAllowed,
  isLoopbackHost,
  isWildcardHost,
  TOKEN_HEADER,
  TOKEN_QUERY,
} from './auth';
