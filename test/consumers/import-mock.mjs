// `import 'teamgames-sdk/mock'` must let the process exit by itself (run.sh gives it a
// time limit): nothing loaded at import may keep the event loop alive.
import { createMockService, exampleSeed } from 'teamgames-sdk/mock';

createMockService({ seed: exampleSeed });
console.log('import teamgames-sdk/mock: loaded, exiting');
