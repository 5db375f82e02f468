// resapi in process for end-to-end tests: start() on 127.0.0.1 port 0 with a silent log (unless the
// options say otherwise), and closed whatever the test does. One server for one test (`withServer`),
// or one for a whole suite (`serverForSuite`: started in before(), closed in after()).
import { after, before } from 'node:test';
import { start, type ResapiServer, type StartOptions } from '../../lib/index.js';
import { silentLogger } from '../../lib/log.js';

/** The options, or a function that gives them once the suite's earlier before() hooks have run. */
export type ServerOptions = StartOptions | (() => StartOptions);

/** Starts a server for `run` and closes it when `run` settles, however it settles. */
export async function withServer(options: StartOptions, run: (server: ResapiServer) => Promise<void>): Promise<void> {
  const server = await startForTest(options);
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

/**
 * One server for the suite whose body (or file top level) calls this: started in a before() hook,
 * then given to `prepare` (the items the tests read, a proxy in front of it) in that same hook, and
 * closed in an after() hook. Hooks run in the order they are registered, so a before() registered
 * ahead of this call runs first and an after() registered ahead of it runs before the close; but
 * at a file's top level Node 20 runs before() hooks at once, without waiting for one another, so
 * whatever needs the server there goes in `prepare`. Its fields can be read in tests and hooks.
 */
export function serverForSuite(
  options: ServerOptions = {},
  prepare?: (server: ResapiServer) => Promise<void>,
): ResapiServer {
  let running: ResapiServer | undefined;
  before(async () => {
    running = await startForTest(typeof options === 'function' ? options() : options);
    await prepare?.(running);
  });
  after(async () => {
    await running?.close();
  });
  const current = (): ResapiServer => {
    if (running === undefined) throw new Error('the server starts in before(); use it inside a test or a later hook');
    return running;
  };
  return {
    get url() {
      return current().url;
    },
    get store() {
      return current().store;
    },
    get webhooks() {
      return current().webhooks;
    },
    close: () => current().close(),
  };
}

function startForTest(options: StartOptions): Promise<ResapiServer> {
  return start({ port: 0, log: silentLogger, ...options });
}
