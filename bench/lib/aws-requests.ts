// Client-side count of the AWS requests (SQS, S3) this process sends to one endpoint
// (fauxqs in the bench): the SDK goes through node:http, which publishes
// `http.client.request.start`. SQS requests are named by their X-Amz-Target action,
// S3 requests by method (GET/PUT/DELETE object, LIST).
import { subscribe, unsubscribe } from 'node:diagnostics_channel';

interface NodeHttpRequest {
  protocol: string;
  method: string;
  path: string;
  getHeader(name: string): unknown;
}

export interface AwsRequestCounter {
  during<T>(work: () => Promise<T>): Promise<{ value: T; byRequest: Record<string, number> }>;
  stop(): void;
}

export function countAwsRequests(endpoint: string): AwsRequestCounter {
  const origin = new URL(endpoint).origin;
  let current: Map<string, number> | undefined;
  const onRequest = (message: unknown): void => {
    if (current === undefined) return;
    const request = (message as { request?: NodeHttpRequest }).request;
    if (request === undefined || `${request.protocol}//${String(request.getHeader('host'))}` !== origin)
      return;
    const target = request.getHeader('x-amz-target');
    let key: string;
    if (typeof target === 'string') key = `SQS ${target.split('.').pop() ?? target}`;
    else if (request.method === 'GET' && /[?&]list-type=2/.test(request.path)) key = 'S3 LIST';
    else key = `S3 ${request.method}`;
    current.set(key, (current.get(key) ?? 0) + 1);
  };
  subscribe('http.client.request.start', onRequest);
  return {
    async during(work) {
      const counts = new Map<string, number>();
      current = counts;
      try {
        const value = await work();
        return { value, byRequest: Object.fromEntries([...counts].sort(([a], [b]) => a.localeCompare(b))) };
      } finally {
        current = undefined;
      }
    },
    stop() {
      unsubscribe('http.client.request.start', onRequest);
    },
  };
}
