// node:http, loaded through require. An ESM import of node:http makes Node build its ESM facade,
// which reads every export — including the lazy WebSocket, CloseEvent and MessageEvent getters,
// which load undici: tens of milliseconds of every function's cold start (bench `functions`).
import { createRequire } from 'node:module';

export const nodeHttp = createRequire(import.meta.url)('node:http') as typeof import('node:http');
