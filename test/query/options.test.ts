// parseQueryString (lib/query/options.ts) against the rules of CONVENTIONS.md#collections: system
// options, refused parameters (CONVENTIONS.md#refused-parameters), simple conditions
// (CONVENTIONS.md#simple-query-strings), decoding (CONVENTIONS.md#query-string-decoding).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseOrderby, parseQueryString, parseSelect, type CollectionQuery } from '../../lib/query/options.js';
import type { Problem } from '../../lib/protocol/problem.js';

/** The parsed query, failing the test when the string was refused. */
function accepted(queryString: string): CollectionQuery {
  const parsed = parseQueryString(queryString);
  assert.ok(parsed.ok, `expected ${JSON.stringify(queryString)} to be accepted, got ${parsed.ok ? '' : parsed.problem.detail}`);
  assert.equal(parsed.skiptoken, undefined);
  return parsed.query;
}

/** The problem, failing the test when the string was accepted; always a 400 bad-request. */
function refused(queryString: string): Problem {
  const parsed = parseQueryString(queryString);
  assert.ok(!parsed.ok, `expected ${JSON.stringify(queryString)} to be refused`);
  assert.equal(parsed.problem.type, 'bad-request');
  assert.equal(parsed.problem.status, 400);
  return parsed.problem;
}

function parameterOf(problem: Problem): string | undefined {
  return problem.errors?.[0]?.parameter;
}

describe('parseQueryString', () => {
  describe('defaults', () => {
    it('should give an empty query for an empty query string', () => {
      assert.deepEqual(accepted(''), { conditions: [], orderby: [], count: false });
    });

    it('should skip empty pairs between ampersands', () => {
      assert.deepEqual(accepted('&&$top=3&'), { conditions: [], orderby: [], count: false, top: 3 });
    });
  });

  describe('system query options', () => {
    it('should read $filter as its decoded text', () => {
      assert.equal(accepted('$filter=price%20lt%2010').filter, 'price lt 10');
    });

    it('should refuse an empty or blank $filter', () => {
      assert.equal(parameterOf(refused('$filter=')), '$filter');
      assert.equal(parameterOf(refused('$filter=%20%09')), '$filter');
    });

    it('should read $select=a,b/c as paths', () => {
      assert.deepEqual(accepted('$select=a,b/c').select, [['a'], ['b', 'c']]);
    });

    it('should tolerate spaces around $select items', () => {
      assert.deepEqual(accepted('$select=a%2C%20b').select, [['a'], ['b']]);
    });

    for (const bad of ['', 'a,', ',a', 'a,,b', 'a/', 'a b', "'a'", '1']) {
      it(`should refuse $select=${JSON.stringify(bad)}`, () => {
        assert.equal(parameterOf(refused(`$select=${encodeURIComponent(bad)}`)), '$select');
      });
    }

    it('should read $orderby=price desc,name with ascending as the default', () => {
      assert.deepEqual(accepted('$orderby=price%20desc,name').orderby, [
        { path: ['price'], descending: true },
        { path: ['name'], descending: false },
      ]);
    });

    it('should read asc and desc case-insensitively', () => {
      assert.deepEqual(accepted('$orderby=a%20DESC,b%20Asc,c%20dEsC').orderby, [
        { path: ['a'], descending: true },
        { path: ['b'], descending: false },
        { path: ['c'], descending: true },
      ]);
    });

    it('should read $orderby paths with /', () => {
      assert.deepEqual(accepted('$orderby=origin/country%20asc').orderby, [{ path: ['origin', 'country'], descending: false }]);
    });

    for (const bad of ['', 'price sideways', 'price desc desc', 'desc price', 'price,', ',price', 'a b c']) {
      it(`should refuse $orderby=${JSON.stringify(bad)}`, () => {
        assert.equal(parameterOf(refused(`$orderby=${encodeURIComponent(bad)}`)), '$orderby');
      });
    }

    it('should read $top as a number, zero included', () => {
      assert.equal(accepted('$top=10').top, 10);
      assert.equal(accepted('$top=0').top, 0);
      assert.equal(accepted('$top=007').top, 7);
    });

    for (const bad of ['', '-1', '1.5', 'ten', '1e3', '%201', '0x10', '+1']) {
      it(`should refuse $top=${JSON.stringify(bad)}`, () => {
        assert.equal(parameterOf(refused(`$top=${bad}`)), '$top');
      });
    }

    it('should read $count=true and $count=false', () => {
      assert.equal(accepted('$count=true').count, true);
      assert.equal(accepted('$count=false').count, false);
    });

    for (const bad of ['', '1', 'yes', 'truthy']) {
      it(`should refuse $count=${JSON.stringify(bad)}`, () => {
        assert.equal(parameterOf(refused(`$count=${bad}`)), '$count');
      });
    }

    it('should read every system option together', () => {
      assert.deepEqual(accepted('$filter=a%20eq%201&$select=a&$orderby=a%20desc&$top=5&$count=true'), {
        conditions: [],
        filter: 'a eq 1',
        select: [['a']],
        orderby: [{ path: ['a'], descending: true }],
        top: 5,
        count: true,
      });
    });

    for (const option of ['$filter=a%20eq%201', '$select=a', '$orderby=a', '$top=1', '$count=true', '$skiptoken=abc']) {
      const name = option.slice(0, option.indexOf('='));
      it(`should refuse ${name} given twice`, () => {
        assert.equal(parameterOf(refused(`${option}&${option}`)), name);
      });
    }

    it('should count a percent-encoded option name as the same option', () => {
      assert.equal(parameterOf(refused('$top=1&%24top=2')), '$top');
    });
  });

  describe('refused parameters', () => {
    for (const name of ['q', 'query']) {
      it(`should refuse ${name} and point to $filter and query resources`, () => {
        const problem = refused(`${name}=price%20lt%2010`);
        assert.equal(parameterOf(problem), name);
        assert.match(problem.detail, /\$filter/);
        assert.match(problem.detail, /query resource/);
      });

      it(`should refuse ${name} even without a value or among other options`, () => {
        assert.equal(parameterOf(refused(name)), name);
        assert.equal(parameterOf(refused(`$top=1&${name}=x`)), name);
      });
    }

    it('should refuse $skip, since jumping to an offset is avoided', () => {
      assert.equal(parameterOf(refused('$skip=10')), '$skip');
    });

    for (const name of ['$x', '$search', '$expand', '$format', '$']) {
      it(`should refuse the unknown option ${name}`, () => {
        const problem = refused(`${encodeURIComponent(name)}=1`);
        assert.equal(parameterOf(problem), name);
      });
    }
  });

  describe('$skiptoken', () => {
    it('should return the token alone with an empty query', () => {
      const parsed = parseQueryString('$skiptoken=abc.def');
      assert.deepEqual(parsed, { ok: true, query: { conditions: [], orderby: [], count: false }, skiptoken: 'abc.def' });
    });

    for (const other of ['$top=1', '$count=true', '$filter=a%20eq%201', '$select=a', '$orderby=a', 'color=red']) {
      it(`should refuse $skiptoken combined with ${other}, in either order`, () => {
        assert.equal(parameterOf(refused(`$skiptoken=abc&${other}`)), '$skiptoken');
        assert.equal(parameterOf(refused(`${other}&$skiptoken=abc`)), '$skiptoken');
      });
    }
  });

  describe('simple conditions', () => {
    it('should read field=value pairs as conditions, in order', () => {
      assert.deepEqual(accepted('color=red&size=10').conditions, [
        { path: ['color'], value: 'red' },
        { path: ['size'], value: '10' },
      ]);
    });

    it('should read a path with / as segments', () => {
      assert.deepEqual(accepted('origin/country=DE').conditions, [{ path: ['origin', 'country'], value: 'DE' }]);
    });

    it('should keep a repeated field as two conditions (both must hold)', () => {
      assert.deepEqual(accepted('tags=a&tags=b').conditions, [
        { path: ['tags'], value: 'a' },
        { path: ['tags'], value: 'b' },
      ]);
    });

    it('should keep "=" after the first one inside the value', () => {
      assert.deepEqual(accepted('formula=a=b').conditions, [{ path: ['formula'], value: 'a=b' }]);
    });

    it('should read a name without "=" as a condition with an empty value', () => {
      assert.deepEqual(accepted('color').conditions, [{ path: ['color'], value: '' }]);
    });

    it('should combine conditions with system options', () => {
      const query = accepted('color=red&$top=2&size=M');
      assert.deepEqual(query.conditions, [{ path: ['color'], value: 'red' }, { path: ['size'], value: 'M' }]);
      assert.equal(query.top, 2);
    });

    it('should accept __proto__ as a plain field name', () => {
      const query = accepted('__proto__=1');
      assert.deepEqual(query.conditions, [{ path: ['__proto__'], value: '1' }]);
      assert.equal(Object.getPrototypeOf(query), Object.prototype);
    });

    for (const bad of ['=red', 'a%20b=1', 'a/=1', '/a=1', 'null=1', 'true=1', "'a'=1", '1a=1', 'a(b)=1']) {
      it(`should refuse ${JSON.stringify(bad)}, whose name is not a property path`, () => {
        assert.ok(refused(bad).detail.length > 0);
      });
    }
  });

  describe('percent-decoding', () => {
    it('should decode names and values', () => {
      assert.deepEqual(accepted('na%6De=caf%C3%A9%20au%20lait').conditions, [{ path: ['name'], value: 'café au lait' }]);
    });

    it("should read '+' as a space and '%2B' as a plus sign, as forms are decoded (CONVENTIONS.md#query-string-decoding)", () => {
      assert.deepEqual(accepted('name=Red+cup').conditions, [{ path: ['name'], value: 'Red cup' }]);
      assert.deepEqual(accepted('name=a%2Bb').conditions, [{ path: ['name'], value: 'a+b' }]);
      assert.equal(accepted('$filter=price+lt+20').filter, 'price lt 20');
      assert.equal(accepted("$filter=name%20eq%20'a%2Bb'").filter, "name eq 'a+b'");
    });

    it("should therefore read 'price+desc' as 'price desc'", () => {
      assert.deepEqual(accepted('$orderby=price+desc').orderby, [{ path: ['price'], descending: true }]);
    });

    it('should refuse json-server parameters, naming the resapi equivalent', () => {
      const cases: readonly [string, RegExp][] = [
        ['_sort=price', /\$orderby/],
        ['_order=desc', /\$orderby=field desc/],
        ['_page=2', /@nextLink/],
        ['_limit=10', /Prefer: maxpagesize/],
        ['_per_page=10', /Prefer: maxpagesize/],
        ['_embed=comments', /\$filter/],
        ['price_gte=10', /\$filter=price ge value/],
        ['price_lte=10', /\$filter=price le value/],
        ['name_like=cup', /\$filter=contains\(name,'text'\)/],
        ['q=cup', /\$filter/],
      ];
      for (const [pair, equivalent] of cases) {
        const problem = refused(pair);
        assert.match(problem.detail, equivalent, pair);
        assert.equal(parameterOf(problem), pair.slice(0, pair.indexOf('=')), pair);
      }
      assert.deepEqual(accepted('_private=1').conditions, [{ path: ['_private'], value: '1' }], 'other names starting with _ are fields');
    });

    it('should decode "&" and "=" only after splitting, so encoded ones stay in the value', () => {
      assert.deepEqual(accepted('name=a%26b%3Dc').conditions, [{ path: ['name'], value: 'a&b=c' }]);
    });

    for (const bad of ['name=%', 'name=%2', 'name=%zz', 'name=%E0%A4%A', 'name=%C3', 'name=%ED%A0%80', '%=1', '$filter=%G0']) {
      it(`should refuse the malformed percent-encoding ${bad}`, () => {
        const problem = refused(bad);
        assert.match(problem.detail, /percent-encoding/);
      });
    }
  });
});

describe('parseOrderby', () => {
  it('should return keys for a valid list and a message otherwise', () => {
    assert.deepEqual(parseOrderby('a,b desc'), [
      { path: ['a'], descending: false },
      { path: ['b'], descending: true },
    ]);
    assert.equal(typeof parseOrderby('a up'), 'string');
  });
});

describe('parseSelect', () => {
  it('should return paths for a valid list and a message otherwise', () => {
    assert.deepEqual(parseSelect('a/b/c,d'), [['a', 'b', 'c'], ['d']]);
    assert.equal(typeof parseSelect('a,'), 'string');
  });
});
