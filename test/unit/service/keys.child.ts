// One of several processes adding API keys to the same data folder at once (keys.test.ts):
// adds `<tag>-<i>` for i < count, one after another, and prints each key on its own line.
import { ApiKeyStore } from '../../../electron/service/keys';

const [dataDir, tag, count] = process.argv.slice(2) as [string, string, string];
const store = new ApiKeyStore(dataDir);
for (let i = 0; i < Number(count); i++) process.stdout.write(`${await store.add(`${tag}-${i}`)}\n`);
