import { DurableObject } from "cloudflare:workers";

class InsufficientFunds extends Error {
  constructor(message) {
    super(message);
    this.name = "InsufficientFunds";
  }
}

// An account keeps its ledger in SQL.
export class Account extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS ledger (id INTEGER PRIMARY KEY, amount INTEGER NOT NULL, memo TEXT)",
    );
  }

  balance() {
    return this.ctx.storage.sql.exec("SELECT COALESCE(SUM(amount), 0) AS b FROM ledger").one().b;
  }

  deposit(amount, memo) {
    if (!Number.isInteger(amount) || amount <= 0) throw new RangeError("amount must be a positive integer");
    this.ctx.storage.sql.exec("INSERT INTO ledger (amount, memo) VALUES (?, ?)", amount, memo ?? null);
    return { balance: this.balance() };
  }

  withdraw(amount) {
    if (amount > this.balance()) throw new InsufficientFunds(`cannot withdraw ${amount}`);
    this.ctx.storage.sql.exec("INSERT INTO ledger (amount) VALUES (?)", -amount);
    return { balance: this.balance() };
  }

  history() {
    return this.ctx.storage.sql.exec("SELECT amount, memo FROM ledger ORDER BY id").toArray();
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const account = env.ACCOUNTS.getByName(url.searchParams.get("account") ?? "alice");
    const amount = Number(url.searchParams.get("amount") ?? "0");
    try {
      switch (url.pathname) {
        case "/deposit":
          return Response.json(await account.deposit(amount, url.searchParams.get("memo")));
        case "/withdraw":
          return Response.json(await account.withdraw(amount));
        case "/history":
          return Response.json(await account.history());
        default:
          return Response.json({ balance: await account.balance() });
      }
    } catch (err) {
      return Response.json({ error: err.name, message: err.message }, { status: 400 });
    }
  },
};
