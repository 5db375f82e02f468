// The Host check (lib/http/host-check.ts, CONVENTIONS.md#host-check): which Host values a server on a
// loopback address answers, and that a server on any other address checks nothing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HostCheck, isLoopbackAddress } from '../../lib/http/host-check.js';

describe('HostCheck', () => {
  it('should admit loopback names, any port and any case, and the listening address', () => {
    const check = HostCheck.forServer('127.0.0.2', '', []);
    assert.ok(check !== undefined);
    for (const host of ['localhost', 'localhost:3000', 'LocalHost:3000', 'localhost.', 'app.localhost', 'a.b.localhost:5173', '127.0.0.1:3000', '[::1]', '[::1]:3000', '127.0.0.2:3000']) {
      assert.ok(check.admits(host), host);
    }
  });

  it('should refuse every other name: a rebound domain, a look-alike, another address, an empty Host', () => {
    const check = HostCheck.forServer('127.0.0.1', '', []);
    assert.ok(check !== undefined);
    for (const host of ['evil.example', 'evil.example:3000', 'localhost.evil.example', 'notlocalhost', '127.0.0.1.nip.io', '127.0.0.2', '192.168.1.20:3000', '[::2]', '']) {
      assert.ok(!check.admits(host), JSON.stringify(host));
    }
  });

  it('should admit the base URL host and allowedHosts, case-insensitively', () => {
    const check = HostCheck.forServer('::1', 'https://API.example.test/v1', ['resapi', 'MyApp.test', '[fd00::5]']);
    assert.ok(check !== undefined);
    for (const host of ['api.example.test', 'api.example.test:443', 'resapi:3000', 'myapp.test', '[fd00::5]:80', '[::1]:3000']) assert.ok(check.admits(host), host);
    assert.ok(!check.admits('example.test'));
  });

  it('should check nothing when the server listens on an address that is not loopback', () => {
    for (const address of ['0.0.0.0', '::', '192.168.1.20', 'fd00::5']) assert.equal(HostCheck.forServer(address, '', []), undefined, address);
  });
});

describe('isLoopbackAddress', () => {
  it('should know 127.0.0.0/8, ::1 and IPv4-mapped loopback, and nothing else', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) assert.ok(isLoopbackAddress(address), address);
    for (const address of ['0.0.0.0', '::', '10.0.0.1', '::ffff:10.0.0.1', 'localhost', '']) assert.ok(!isLoopbackAddress(address), address);
  });
});
