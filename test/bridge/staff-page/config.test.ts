/**
 * The `staff` section of bridge.json: its defaults, its path made absolute against the
 * config's folder, and every mistake named with the rest of the config's.
 */
import { describe, expect, it } from 'vitest';
import { checkBridgeConfig } from '../../../src/bridge/config.js';

const give = { webhook: { url: 'http://127.0.0.1:9000/teamgames' } };

describe('bridge.json: staff', () => {
  it('is optional; given, it defaults to loopback port 8788, 480-minute sessions and no Secure cookie', () => {
    expect(checkBridgeConfig({ give }, '/etc/teamgames').staff).toBeUndefined();
    expect(checkBridgeConfig({ give, staff: { accountsFile: 'staff-accounts' } }, '/etc/teamgames').staff).toEqual({
      listen: { host: '127.0.0.1', port: 8788 },
      accountsFile: '/etc/teamgames/staff-accounts',
      sessionMinutes: 480,
      secureCookie: false,
    });
    expect(checkBridgeConfig({ give, staff: { accountsFile: '/srv/a', listen: { host: '::1', port: 0 }, sessionMinutes: 30, secureCookie: true } }, '/x').staff).toEqual({ listen: { host: '::1', port: 0 }, accountsFile: '/srv/a', sessionMinutes: 30, secureCookie: true });
  });

  it('names every mistake, with the others of the config, and refuses a password written in it', () => {
    let message = '';
    try {
      checkBridgeConfig({ give, staff: { listen: { port: 70000 }, sessionMinutes: 0, secureCookie: 'yes', extra: 1, password: 'SECRET-staff' } }, '/x');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message.split('\n').slice(1).map((l) => l.trim()).sort()).toEqual([
      'staff.accountsFile: must be the path of the staff accounts file (made with teamgames bridge staff-hash)',
      'staff.extra: unknown field',
      'staff.listen.port: must be an integer from 0 to 65535',
      'staff.password: secrets are never read from the config file (nor the command line); keep it in an environment variable or a file',
      'staff.secureCookie: must be true (staff reach the page through HTTPS) or false',
      'staff.sessionMinutes: must be an integer from 1 to 10080',
    ]);
    expect(message).not.toContain('SECRET');
  });
});
