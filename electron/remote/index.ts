// Remote inference: OpenAI-compatible servers (llama-server, vLLM, Ollama, LM Studio, OpenAI) as a
// TatraBackend, spread over several endpoints. Main-process code (network); no Electron, no fs.
export { RemoteBackend, connectRemoteBackend, defaultMaxInFlight, remoteBackendId, type RemoteBackendOptions, type RemoteBackendStats } from './backend';
export { probeServer, checkModelListed, serverRoot, constrainedFor, type ProbeOptions } from './probe';
export { shapeChatCall, llamaServerCompletion, readAnswer, choiceSchema, type ShapedCall, type ShapedAnswer } from './shapes';
export { HttpFailure, httpJson, backoffDelay, parseRetryAfter } from '../net/http';
export type { EndpointState } from './endpoints';
export { connectRemote, remoteBackendOptions, INLINE_KEY_ENV, type RemoteLookup, type RemoteTuning, type ConnectRemoteOptions } from './connect';
