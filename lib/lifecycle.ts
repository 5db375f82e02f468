// One lifecycle for everything a server runs (README, Architecture): components start in the order
// they were added and stop in the reverse order, each first drained (stop taking new work, finish
// what is running) and then closed. A server adds the store first, then its background workers, then
// HTTP, so a shutdown (SIGTERM, SIGINT or close()) goes: HTTP stops accepting → in-flight requests
// finish → background workers drain → the store flushes and releases the data dir.
import type { Logger } from './log.js';

/**
 * A part of the server with work of its own. It owns resources from the moment it is made (a store is
 * opened before the server starts), so drain() and close() must also work when start() never ran.
 */
export interface Component {
  /** For the log. */
  readonly name: string;
  start(): Promise<void>;
  /** Stops taking new work and resolves once the work in hand is done (or its own deadline passed). */
  drain(): Promise<void>;
  /** Releases what is left: connections, timers, files. */
  close(): Promise<void>;
}

export class Lifecycle {
  private readonly components: Component[] = [];
  private state: 'new' | 'starting' | 'running' | 'stopped' = 'new';
  private stopping: Promise<void> | undefined;

  constructor(private readonly log: Logger) {}

  /** Adds a component before start(). */
  add(component: Component): void {
    if (this.state !== 'new') throw new TypeError(`Lifecycle.add: cannot add ${component.name} once started`);
    this.components.push(component);
  }

  /** Starts every component in order; when one fails, stops them all and rethrows. */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new TypeError('Lifecycle.start: already started');
    this.state = 'starting';
    for (const component of this.components) {
      try {
        await component.start();
      } catch (error) {
        await this.stop();
        throw error;
      }
    }
    if (this.state === 'starting') this.state = 'running';
  }

  /** Drains and closes every component, the last added first. Safe to call more than once. */
  stop(): Promise<void> {
    this.stopping ??= this.stopAll();
    return this.stopping;
  }

  private async stopAll(): Promise<void> {
    this.state = 'stopped';
    for (const component of [...this.components].reverse()) {
      await this.quietly(component, 'drain', () => component.drain());
      await this.quietly(component, 'close', () => component.close());
    }
  }

  /** One component failing to stop must not keep the next one (the store) from being flushed. */
  private async quietly(component: Component, step: string, run: () => Promise<void>): Promise<void> {
    try {
      await run();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.log('error', `${component.name} failed to ${step}`, { error: message });
    }
  }
}
