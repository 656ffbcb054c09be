// Zod 4 probes `new Function('')` to decide whether it may compile fast parsers. Under the page's
// CSP (no 'unsafe-eval') that probe is itself a reported violation, so turn it off: the renderer
// parses small payloads and does not need the JIT. Imported first by main.tsx.
import { z } from 'zod';

z.config({ jitless: true });
