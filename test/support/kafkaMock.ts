// librdkafka's Kafka-protocol mock cluster (through kcat, as test/run.sh starts it) for tests that
// take a broker away and bring one back at the same address.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type Server } from 'node:net';

export interface MockCluster {
  port: number;
  process: ChildProcess;
}

/** A mock cluster of one broker, living as long as an idle kcat consumer. */
export async function startMockCluster(): Promise<MockCluster> {
  const child = spawn('kcat', ['-b', 'mock:1', '-X', 'test.mock.num.brokers=1', '-X', 'debug=mock', '-C', '-q', '-t', 'mds-mock-idle'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const port = await new Promise<number>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      const found = /bootstrap\.servers=[0-9.]+:(\d+)/.exec(log);
      if (found) resolve(Number(found[1]));
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', () => reject(new Error(`kcat exited: ${log}`)));
  });
  return { port, process: child };
}

export async function stopMockCluster(cluster: MockCluster): Promise<void> {
  if (cluster.process.exitCode !== null || cluster.process.signalCode !== null) return;
  cluster.process.kill();
  await once(cluster.process, 'exit');
}

/**
 * A broker answering at `port` again, after the cluster that listened there stopped: a loopback
 * proxy on that port in front of a new mock cluster (a new cluster cannot pick its port).
 */
export async function brokerAgainAt(port: number): Promise<{ cluster: MockCluster; proxy: Server }> {
  const cluster = await startMockCluster();
  const proxy = createServer((client) => {
    const upstream = connect(cluster.port, '127.0.0.1');
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  proxy.listen(port, '127.0.0.1');
  await once(proxy, 'listening');
  return { cluster, proxy };
}
