// Addresses as the network reads them (lib/webhooks/addresses.ts), the ranges
// `outbox.refusePrivateAddresses` refuses (CONVENTIONS.md#deliveries), and the self-delivery check
// on resolved addresses (lib/webhooks/subscriptions.ts `pointsAtSelf`, CONVENTIONS.md#subscriptions).
// Nothing here connects anywhere: IP literals need no DNS, and `localhost` is read from the hosts file.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { addressBytes, canonicalAddress, isLoopbackAddress, isPrivateAddress, isUnspecifiedAddress } from '../../lib/webhooks/addresses.js';
import { pointsAtSelf } from '../../lib/webhooks/subscriptions.js';

describe('addressBytes and canonicalAddress', () => {
  it('should read every spelling of one address as the same bytes', () => {
    for (const spelling of ['127.0.0.1', '::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:ffff:7f00:1', '::FFFF:7F00:0001']) {
      assert.deepEqual(addressBytes(spelling), [127, 0, 0, 1], spelling);
      assert.equal(canonicalAddress(spelling), '127.0.0.1', spelling);
    }
    assert.equal(canonicalAddress('::1'), '0:0:0:0:0:0:0:1');
    assert.equal(canonicalAddress('fe80::1%eth0'), 'fe80:0:0:0:0:0:0:1');
    assert.equal(canonicalAddress('2001:db8::1.2.3.4'), '2001:db8:0:0:0:0:102:304');
    assert.equal(canonicalAddress('1:2:3:4:5:6:7:8'), '1:2:3:4:5:6:7:8');
  });

  it('should read anything that is not an address as undefined', () => {
    for (const text of ['localhost', '', '127.1', '1.2.3.256', '::g', 'example.test']) assert.equal(addressBytes(text), undefined, text);
  });
});

describe('isPrivateAddress', () => {
  it('should refuse loopback, RFC 1918, link-local, unique-local and unspecified addresses, in IPv4, IPv6 and IPv4-mapped IPv6', () => {
    const refused = [
      '0.0.0.0', '0.1.2.3', '127.0.0.1', '127.255.255.254', '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255',
      '192.168.0.1', '192.168.255.255', '169.254.169.254', '::', '::1', 'fe80::1', 'febf::1', 'fc00::1', 'fd12:3456::1',
      '::ffff:127.0.0.1', '::ffff:10.1.2.3', '::ffff:a9fe:a9fe', '::ffff:192.168.1.1', 'not an address',
    ];
    for (const address of refused) assert.equal(isPrivateAddress(address), true, address);
  });

  it('should refuse shared, reserved, multicast and broadcast IPv4, and IPv4 carried by NAT64 or 6to4 into a refused range', () => {
    const refused = [
      '100.64.0.1', '100.127.255.255', '192.0.0.8', '198.18.0.1', '198.19.255.255', '224.0.0.1', '239.255.255.250',
      '240.0.0.1', '255.255.255.255', 'ff02::1', 'ff05::1:3', '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe',
      '64:ff9b::192.168.1.1', '64:ff9b:1::1', '2002:7f00:1::', '2002:c0a8:101::1', '::ffff:100.64.0.1',
    ];
    for (const address of refused) assert.equal(isPrivateAddress(address), true, address);
    const allowed = ['100.63.255.255', '100.128.0.0', '192.0.1.1', '198.17.255.255', '198.20.0.0', '223.255.255.255', '64:ff9b::808:808', '2002:808:808::1'];
    for (const address of allowed) assert.equal(isPrivateAddress(address), false, address);
  });

  it('should allow public addresses, just outside each range', () => {
    const allowed = ['1.1.1.1', '9.255.255.255', '11.0.0.0', '126.255.255.255', '128.0.0.0', '172.15.255.255', '172.32.0.0', '192.167.255.255', '192.169.0.0', '169.253.255.255', '169.255.0.0', '2001:db8::1', '2606:4700::1111', 'fec0::1', 'fe00::1', 'fb00::1', '::2', '::ffff:8.8.8.8'];
    for (const address of allowed) assert.equal(isPrivateAddress(address), false, address);
  });

  it('should tell loopback and unspecified addresses apart from the rest', () => {
    assert.deepEqual(['127.9.9.9', '::1', '::ffff:127.0.0.1', '10.0.0.1', '::'].map(isLoopbackAddress), [true, true, true, false, false]);
    assert.deepEqual(['0.0.0.0', '::', '::ffff:0.0.0.0', '0.0.0.1', '::1'].map(isUnspecifiedAddress), [true, true, true, false, false]);
  });
});

describe('pointsAtSelf', () => {
  const port = 8123;
  const loopback = { host: '127.0.0.1', port, baseUrl: '' };

  it('should find this server behind any spelling of a loopback or unspecified address on its port', async () => {
    const hosts = ['127.0.0.1', '127.1', '0x7f.1', '[::1]', '0.0.0.0', '[::]', '[::ffff:127.0.0.1]', '[::ffff:0.0.0.0]', 'localhost'];
    for (const host of hosts) assert.equal(await pointsAtSelf(`http://${host}:${port}/x`, loopback), true, host);
  });

  it('should not find it on another port, or at a public address', async () => {
    assert.equal(await pointsAtSelf(`http://127.0.0.1:${port + 1}/x`, loopback), false);
    assert.equal(await pointsAtSelf(`http://203.0.113.7:${port}/x`, loopback), false);
    assert.equal(await pointsAtSelf('http://127.0.0.1/x', loopback), false, 'port 80 is not ours');
  });

  it('should find it under its base URL whatever the host', async () => {
    const behindProxy = { ...loopback, baseUrl: 'https://api.example.test' };
    assert.equal(await pointsAtSelf('https://api.example.test/things', behindProxy), true);
  });

  it('should find every local interface address when listening on all of them, and only its own address otherwise', async () => {
    const local = Object.values(networkInterfaces()).flatMap((entries) => entries ?? []).map((entry) => entry.address);
    assert.ok(local.length > 0);
    for (const address of local) {
      const host = address.includes(':') ? `[${address.split('%')[0]}]` : address;
      for (const all of ['0.0.0.0', '::']) {
        assert.equal(await pointsAtSelf(`http://${host}:${port}/x`, { host: all, port, baseUrl: '' }), true, `${address} listening on ${all}`);
      }
    }
    const one = { host: '192.0.2.10', port, baseUrl: '' };
    assert.equal(await pointsAtSelf(`http://192.0.2.10:${port}/x`, one), true);
    assert.equal(await pointsAtSelf(`http://[::ffff:c000:20a]:${port}/x`, one), true, 'the mapped spelling of its address');
    assert.equal(await pointsAtSelf(`http://192.0.2.11:${port}/x`, one), false);
    assert.equal(await pointsAtSelf(`http://0.0.0.0:${port}/x`, one), true, '0.0.0.0 reaches this host whatever it listens on');
  });
});
