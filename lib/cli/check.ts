// `resapi check BASE_URL` (CONVENTIONS.md#conformance-checker): runs the checks of lib/check against a
// server and prints the report; exit 1 when a check failed. Secrets come from the environment
// variables named on the command line, so they never show in `ps`.
import { reportJson, reportText } from '../check/report.js';
import { runChecks, type CheckOptions } from '../check/run.js';
import type { CheckArgs } from './args.js';

export async function check(args: CheckArgs): Promise<number> {
  const secret = secretFrom(args.webhookSecretEnv);
  const apiKey = secretFrom(args.apiKeyEnv);
  if (secret === null || apiKey === null) return 2;
  const options: CheckOptions = {
    ...(secret === undefined ? {} : { webhookSecret: secret }),
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(args.webhookPath === undefined ? {} : { webhookPath: args.webhookPath }),
    ...(args.only === undefined ? {} : { only: args.only }),
    ...(args.docsBase === undefined ? {} : { docsBase: args.docsBase }),
  };
  const report = await runChecks(args.baseUrl, options);
  process.stdout.write(args.json ? reportJson(report) : reportText(report));
  return report.summary.fail > 0 ? 1 : 0;
}

/** The value of the variable `name`; null (after saying why) when it is named but unset or empty. */
function secretFrom(name: string | undefined): string | undefined | null {
  if (name === undefined) return undefined;
  const value = process.env[name];
  if (value === undefined || value === '') {
    process.stderr.write(`resapi: check: the environment variable ${name} is not set\n`);
    return null;
  }
  return value;
}
