// End to end: `-0` is refused, never silently stored as `0`. JSON.stringify writes -0 as `0`, so a
// stored -0 would come back as another number than the one sent; like every number JSON cannot carry
// through a parse and a serialize unchanged, it is a 400 naming its pointer (or its CSV row) on
// every write path, and nothing is stored (CONVENTIONS.md#json-bodies).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { create, JSON_HEADERS, problemOf, request } from '../support/http.js';
import { serverForSuite } from '../support/server.js';

const CREATE = { ...JSON_HEADERS, 'If-None-Match': '*' } as const;
const NEGATIVE_ZEROS = ['-0', '-0.0', '-0e0', '-0.000E+5', '-0e-400'];

describe('negative zero over HTTP', () => {
  const server = serverForSuite({ memory: true }, async (server) => {
    assert.equal((await create(server.url, '/temps/t1', { celsius: 5 })).status, 201);
  });

  it('should answer 400 with the pointer to a PUT of -0 however it is spelled, and store nothing', async () => {
    for (const literal of NEGATIVE_ZEROS) {
      const res = await request(server.url, '/zeros/z1', { method: 'PUT', headers: CREATE, body: `{"name":"x","at":[1,{"v":${literal}}]}` });
      assert.equal(res.status, 400, literal);
      const problem = problemOf(res);
      assert.equal(problem.type, 'tag:resapi,2026:problem/invalid-body', literal);
      assert.deepEqual(problem.errors, [{ pointer: '/at/1/v', detail: 'negative zero cannot be stored' }], literal);
      assert.equal((await request(server.url, '/zeros/z1')).status, 404, literal);
    }
  });

  it('should answer 400 to a POST of -0 and create nothing', async () => {
    const res = await request(server.url, '/zeros', { method: 'POST', headers: JSON_HEADERS, body: '{"v":-0}' });
    assert.equal(res.status, 400);
    assert.deepEqual(problemOf(res).errors, [{ pointer: '/v', detail: 'negative zero cannot be stored' }]);
    const listed = await request(server.url, '/zeros?$count=true');
    assert.equal((listed.json() as { '@count': number })['@count'], 0);
  });

  it('should answer 400 naming the row to a bulk file setting a number to -0, and apply nothing', async () => {
    const res = await request(server.url, '/temps/$bulk', { method: 'PUT', headers: { 'Content-Type': 'text/csv' }, body: 'id,currentCelsius,newCelsius\nt1,5,-0\n' });
    assert.equal(res.status, 400, res.text);
    assert.deepEqual(problemOf(res).errors?.map((error) => (error as { row?: number }).row), [2]);
    assert.equal((await request(server.url, '/temps/t1')).text, '{"id":"t1","celsius":5}');
  });

  it('should store 0, 0.0 and -0.5 as the numbers they write', async () => {
    const res = await request(server.url, '/zeros/z2', { method: 'PUT', headers: CREATE, body: '{"a":0,"b":0.0,"c":-0.5,"d":"-0"}' });
    assert.equal(res.status, 201, res.text);
    assert.equal((await request(server.url, '/zeros/z2')).text, '{"id":"z2","a":0,"b":0,"c":-0.5,"d":"-0"}');
  });
});
