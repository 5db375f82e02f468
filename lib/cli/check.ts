// `resapi check BASE_URL` (CONVENTIONS.md#conformance-checker): runs the checks of lib/check against a
// server and prints the report (text or --json), and with --junit writes it as JUnit XML too. Exit 0
// when nothing failed, 1 when a check failed, 2 on a usage error or when BASE_URL gives no HTTP answer:
// then one line on stderr, nothing on stdout, no file written. Secrets come from the environment
// variables named on the command line, so they never show in `ps`.
import { writeFile } from 'node:fs/promises';
import { reportJunit } from '../check/junit.js';
import { reportJson, reportText } from '../check/report.js';
import { CheckUnreachable, runChecks, type CheckOptions, type CheckReport } from '../check/run.js';
import type { CheckArgs } from './args.js';

export async function check(args: CheckArgs): Promise<number> {
  const secret = secretFrom(args.webhookSecretEnv);
  const apiKey = secretFrom(args.apiKeyEnv);
  if (secret === null || apiKey === null) return 2;
  const options: CheckOptions = {
    ...(secret === undefined ? {} : { webhookSecret: secret }),
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(args.webhookPath === undefined ? {} : { webhookPath: args.webhookPath }),
    ...(args.webhookScheme === undefined ? {} : { webhookScheme: args.webhookScheme }),
    ...(args.only === undefined ? {} : { only: args.only }),
    ...(args.skip === undefined ? {} : { skip: args.skip }),
    ...(args.headers === undefined ? {} : { headers: Object.fromEntries(args.headers) }),
    ...(args.collection === undefined ? {} : { collection: args.collection }),
    ...(args.timeoutMs === undefined ? {} : { timeoutMs: args.timeoutMs }),
    ...(args.verbose === undefined ? {} : { verbose: true }),
    ...(args.docsBase === undefined ? {} : { docsBase: args.docsBase }),
  };
  let report: CheckReport;
  try {
    report = await runChecks(args.baseUrl, options);
  } catch (error) {
    if (!(error instanceof CheckUnreachable)) throw error;
    process.stderr.write(`resapi: check: ${error.message}\n`);
    return 2;
  }
  process.stdout.write(args.json ? reportJson(report) : reportText(report));
  if (args.junit !== undefined) {
    try {
      await writeFile(args.junit, reportJunit(report));
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      process.stderr.write(`resapi: check: cannot write the JUnit report to ${args.junit}: ${why}\n`);
      return 2;
    }
  }
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
