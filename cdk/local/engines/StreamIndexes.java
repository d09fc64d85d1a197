// Adds to DynamoDB Local's SQLite database the indexes its stream-record table lacks (dynamodb-local.ts,
// "Stream indexes", says why and what it measured). Run by the local cloud once DynamoDB Local answers,
// with the sqlite4java that DynamoDB Local itself loads, on the database file it has open: SQLite's own
// locking orders this schema change with the engine's requests, and the engine re-prepares its
// statements after it.
//
// Usage: java -Djava.library.path=<DynamoDB Local dir> -cp <this class>:<sqlite4java jar> StreamIndexes [--check] <db file>
// Prints what it did; exits 2 when the database has no stream-record table yet. --check changes nothing and
// prints the names of the indexes the stream-record table has, one a line.

import com.almworks.sqlite4java.SQLiteConnection;
import com.almworks.sqlite4java.SQLiteStatement;
import java.io.File;
import java.util.logging.Level;
import java.util.logging.Logger;

public final class StreamIndexes {
  /** DynamoDB Local's table of stream records: one row per record of every table's stream. */
  private static final String RECORDS = "us";
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

  private StreamIndexes() {}

  public static void main(String[] args) throws Exception {
    boolean check = args.length == 2 && args[0].equals("--check");
    if (args.length != 1 && !check) {
      System.err.println("usage: StreamIndexes [--check] <DynamoDB Local database file>");
      System.exit(64);
    }
    Logger.getLogger("com.almworks.sqlite4java").setLevel(Level.WARNING);
    SQLiteConnection db = new SQLiteConnection(new File(args[args.length - 1]));
    try {
      db.open(false);
      // DynamoDB Local may be writing: wait for its lock rather than fail.
      db.setBusyTimeout(30_000);
      if (!hasTable(db, RECORDS)) {
        System.out.println("no stream-record table yet");
        System.exit(2);
      }
      if (check) {
        printIndexes(db);
        return;
      }
      for (String index : INDEXES) db.exec(index);
      System.out.println("stream-record indexes present");
    } finally {
      db.dispose();
    }
  }

  private static void printIndexes(SQLiteConnection db) throws Exception {
    SQLiteStatement query = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? ORDER BY name");
    try {
      query.bind(1, RECORDS);
      while (query.step()) System.out.println(query.columnString(0));
    } finally {
      query.dispose();
    }
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
