// A raw HTTP/1.1 receiver on 127.0.0.1 port 0 for the posters' tests (lib/webhooks/post.ts,
// post-thread.ts): it keeps each connection and each request's bytes, and answers as a test says.
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';

/** A receiver that hands every request's bytes to `answer`, which writes what it likes to the socket. */
export class RawReceiver {
  readonly connections: Socket[] = [];
  readonly requests: string[] = [];
  answer: (socket: Socket) => void = (socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
  private readonly server: Server = createServer((socket) => {
    this.connections.push(socket);
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(text)?.[1] ?? 0);
      if (text.length < end + 4 + length) return;
      this.requests.push(text.slice(0, end + 4 + length));
      text = text.slice(end + 4 + length);
      this.answer(socket);
    });
    socket.on('error', () => undefined);
  });

  async start(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    return `http://127.0.0.1:${address.port}/hook?x=1`;
  }

  async stop(): Promise<void> {
    for (const socket of this.connections) socket.destroy();
    this.server.close();
    await once(this.server, 'close');
  }
}
