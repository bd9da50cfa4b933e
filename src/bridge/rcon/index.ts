/**
 * The RCON sink's room, its front door: what the bridge's config checks against (the
 * games' presets and reply patterns, the templates' placeholders), and the sink itself,
 * loaded by `import()` (rcon-client with it) only for a bridge that gives by RCON.
 *
 * @module
 * @internal
 */
import type { ItemSink, RconGiveConfig, RconPassword, RconSinkDeps } from './types.js';

export { GAMES, patternProblem, type Game, type ReplyPatterns } from './replies.js';
export { PURCHASE_PLACEHOLDERS, VOTE_PLACEHOLDERS, templateProblem } from './template.js';
export type { RconGiveConfig, RconPassword, RconSinkDeps } from './types.js';

/**
 * The RCON sink of `teamgames bridge` (`give.rcon`), its module (and rcon-client) loaded now.
 * @throws Error naming the template that is wrong (an unknown placeholder, a control character).
 */
export async function openRconSink(config: RconGiveConfig, deps: RconSinkDeps, password: RconPassword): Promise<ItemSink> {
  const { createRconSink } = await import('./sink.js');
  return createRconSink(config, deps, password);
}
