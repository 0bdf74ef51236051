// The baseline: a bare Express 5 JSON echo, run with plain node.
/* global process, console */
import express from 'express';

const app = express();
app.use(express.json({ limit: '256kb' }));
app.post(/.*/, (req, res) => res.json(req.body));
const server = app.listen(Number(process.argv[2]), '127.0.0.1', () =>
  console.log('echo listening'),
);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
