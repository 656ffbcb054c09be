// `tatra api`: TATRA as a model other tools call, over OpenAI's protocol, through the same engine
// as every other face.
export { startApiService, type ApiServiceOptions, type RunningApiService } from './server';
export { ApiKeyStore, API_KEYS_FILE, API_KEY_PREFIX, type ApiKeyInfo } from './keys';
export { PAIRING_NAME, pairingName, type LoadedPairing, type Pairing } from './catalog';
