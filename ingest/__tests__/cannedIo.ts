import type { VenueIo } from '../venue.ts';

/**
 * A VenueIo that answers GETs of the given URLs, each once, with canned JSON, and records what was
 * asked: a market listing tested without the network. Any other request (a URL not given, one asked
 * twice, a POST, a websocket request) fails, so a listing cannot loop or call what it should not.
 */
export function cannedIo(bodies: Record<string, unknown>): { io: VenueIo; asked: string[] } {
  const unserved = new Map(Object.entries(bodies));
  const asked: string[] = [];
  const io: VenueIo = {
    async getJson(url) {
      asked.push(url);
      if (!unserved.has(url)) throw new Error(`no canned body for ${url}`);
      const body = unserved.get(url);
      unserved.delete(url);
      return body;
    },
    postJson: async (url) => Promise.reject(new Error(`unexpected POST ${url}`)),
    wsRequest: async (url) => Promise.reject(new Error(`unexpected websocket request ${url}`)),
  };
  return { io, asked };
}
