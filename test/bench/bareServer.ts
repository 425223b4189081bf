// The floor of an HTTP answer on this machine: a bare node:http server, in a process of its own,
// that answers each path with bytes given to it and does nothing else. The market bench asks it as
// it asks the demo, in turn with it while the demo ingests, so that what the machine's load alone
// costs an answer is measured beside what the service's answers cost. Each body is compressed at the start as the API
// compresses it (api/encoding.ts) and sent in the coding the API would send it in for that request:
// the client then pays the same decompression for both.
//   node test/bench/bareServer.ts BODIES.json   (a JSON object: path with query → body text)
// Prints one line, {"url": "http://127.0.0.1:PORT"}, once it listens.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { compressors, negotiatedEncoding, type Encoding } from '../../api/encoding.ts';

type Forms = { identity: Buffer } & Record<Encoding, Buffer>;

async function formsOf(text: string): Promise<Forms> {
  const identity = Buffer.from(text);
  return { identity, br: await compressors.br(identity), gzip: await compressors.gzip(identity) };
}

const texts = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Record<string, string>;
const bodies = new Map<string, Forms>();
for (const [path, text] of Object.entries(texts)) bodies.set(path, await formsOf(text));

const server = createServer((req, res) => {
  const forms = bodies.get(req.url ?? '');
  if (!forms) {
    res.writeHead(404).end();
    return;
  }
  const encoding = negotiatedEncoding(req, forms.identity.length);
  const body = encoding ? forms[encoding] : forms.identity;
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length, ...(encoding ? { 'content-encoding': encoding } : {}) }).end(body);
});
server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
