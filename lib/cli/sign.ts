// `resapi sign --secret-env NAME < body.json` (CONVENTIONS.md#command-line): prints the X-Signature value of the bytes
// on standard input, signed with the secret in the environment variable NAME (the secret itself never
// appears on a command line, where `ps` would show it). For people testing their own providers and
// for the README's tour: curl -H "X-Signature: $(resapi sign --secret-env S < e.json)" --data-binary @e.json.
import { webhookSignature } from '../protocol/signature.js';

export async function sign(secretEnv: string): Promise<number> {
  const secret = process.env[secretEnv];
  if (secret === undefined || secret === '') {
    process.stderr.write(`resapi sign: the environment variable ${secretEnv} holds no secret\n`);
    return 2;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  process.stdout.write(`${webhookSignature(Buffer.concat(chunks), secret)}\n`);
  return 0;
}
