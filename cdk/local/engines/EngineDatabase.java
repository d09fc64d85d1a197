// What the local cloud does to DynamoDB Local's SQLite database (dynamodb-local-database.ts says why and
// what each part measured), with the sqlite4java that DynamoDB Local itself loads:
//
// - wal, before the engine starts (nothing else has the file open): the database is put in SQLite's
//   write-ahead-log mode, which SQLite keeps in the file, so the engine opens it that way. A database made
//   now also gets pages of 4 KiB, SQLite's current default, instead of the bundled 3.8.7's 1 KiB, which
//   spread every 1 KiB item over overflow pages.
// - rollback, before the engine starts, on a database that exists: back to the rollback journal the
//   engine makes its databases with. Its page size stays as it is.
// - index, once the engine answers: the indexes its stream-record table lacks. SQLite's own locking orders
//   this schema change with the engine's requests, and the engine re-prepares its statements after it.
// - check: changes nothing; prints the journal mode, the page size, then the stream-record table's index
//   names, one a line.
//
// Usage: java -Djava.library.path=<DynamoDB Local dir> -cp <this class>:<sqlite4java jar> EngineDatabase wal|rollback|index|check <db file>
// Prints what it did; `index` exits 2 when the database has no stream-record table yet.

import com.almworks.sqlite4java.SQLiteConnection;
import com.almworks.sqlite4java.SQLiteStatement;
import java.io.File;
import java.util.logging.Level;
import java.util.logging.Logger;

public final class EngineDatabase {
  /** DynamoDB Local's table of stream records: one row per record of every table's stream. */
  private static final String RECORDS = "us";
  /** A new database's page size: SQLite's default since 3.12, which the bundled 3.8.7 predates. */
  private static final int PAGE_BYTES = 4096;
  /**
   * Ours, by name, so they are recognisable in the engine's database. One column each: SequenceNumber is
   * the table's rowid, which every index carries last, and the SQLite that DynamoDB Local bundles (3.8.7)
   * then searches "StreamID = ? AND rowid > ?" as one range. With SequenceNumber named as a second column
   * it used the equality alone and read the stream's every record on each GetRecords (measured on 120,000
   * records: 42 ms a GetRecords of a caught-up reader, against 22 ms with no index and 0.02 ms with these).
   */
  private static final String[] INDEXES = {
    // getStreamDescription's MIN(SequenceNumber) ... WHERE StreamID = ? (run on every write to a streamed
    // table), and GetRecords' WHERE StreamID = ? AND ShardID = ? AND SequenceNumber >= ?
    "CREATE INDEX IF NOT EXISTS ringstore_us_stream ON us(StreamID)",
    // the last sequence number of a shard: WHERE ShardID = ? ORDER BY SequenceNumber DESC LIMIT 1
    "CREATE INDEX IF NOT EXISTS ringstore_us_shard ON us(ShardID)",
    // The first version's two-column indexes, on a database kept from it.
    "DROP INDEX IF EXISTS ringstore_us_by_stream",
    "DROP INDEX IF EXISTS ringstore_us_by_shard",
  };

  private EngineDatabase() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 2 || !java.util.List.of("wal", "rollback", "index", "check").contains(args[0])) {
      System.err.println("usage: EngineDatabase wal|rollback|index|check <DynamoDB Local database file>");
      System.exit(64);
    }
    Logger.getLogger("com.almworks.sqlite4java").setLevel(Level.WARNING);
    SQLiteConnection db = new SQLiteConnection(new File(args[1]));
    try {
      // Only `wal` makes a database: the engine makes its own otherwise.
      db.open(args[0].equals("wal"));
      // DynamoDB Local may be writing: wait for its lock rather than fail.
      db.setBusyTimeout(30_000);
      switch (args[0]) {
        case "wal" -> wal(db);
        case "rollback" -> System.out.println("journal mode " + text(db, "PRAGMA journal_mode = DELETE"));
        case "index" -> index(db);
        default -> check(db);
      }
    } finally {
      db.dispose();
    }
  }

  private static void wal(SQLiteConnection db) throws Exception {
    // Takes effect only on a database with no table yet; a kept one keeps its page size.
    if (!hasAnyTable(db)) db.exec("PRAGMA page_size = " + PAGE_BYTES);
    String mode = text(db, "PRAGMA journal_mode = WAL");
    System.out.println("journal mode " + mode + ", pages of " + text(db, "PRAGMA page_size") + " bytes");
  }

  private static void index(SQLiteConnection db) throws Exception {
    if (!hasTable(db, RECORDS)) {
      System.out.println("no stream-record table yet");
      System.exit(2);
    }
    for (String index : INDEXES) db.exec(index);
    System.out.println("stream-record indexes present");
  }

  private static void check(SQLiteConnection db) throws Exception {
    System.out.println(text(db, "PRAGMA journal_mode"));
    System.out.println(text(db, "PRAGMA page_size"));
    SQLiteStatement query = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? ORDER BY name");
    try {
      query.bind(1, RECORDS);
      while (query.step()) System.out.println(query.columnString(0));
    } finally {
      query.dispose();
    }
  }

  /** The first column of the first row of `sql`. */
  private static String text(SQLiteConnection db, String sql) throws Exception {
    SQLiteStatement query = db.prepare(sql);
    try {
      return query.step() ? query.columnString(0) : "";
    } finally {
      query.dispose();
    }
  }

  private static boolean hasAnyTable(SQLiteConnection db) throws Exception {
    return !text(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'").equals("0");
  }

  private static boolean hasTable(SQLiteConnection db, String name) throws Exception {
    SQLiteStatement query = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
    try {
      return query.bind(1, name).step();
    } finally {
      query.dispose();
    }
  }
}
