/**
 * The bridge's HTTP API, its front door: the route table (routes.ts) and the server that
 * runs it (server.ts), whose listener the staff page shares.
 *
 * @module
 * @internal
 */
export { ApiError, ROUTES, routeList, type Route } from './routes.js';
export { closeGracefully, listenOn, startBridgeServer, type BridgeServer, type BridgeServerOptions } from './server.js';
