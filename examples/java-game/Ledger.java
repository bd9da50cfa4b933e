import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.Set;

/**
 * The game's record of what it gave, one line per item: {@code deliveryId<TAB>player<TAB>productId<TAB>quantity}.
 * Giving an item and recording its deliveryId are one durable append (written and fsync'd
 * before the webhook answers 2xx), so a delivery the bridge sends again (it was killed
 * between our 2xx and its journal's acknowledgement) is found here and not given twice.
 * In a real game the same holds with a database: the item and its deliveryId in one transaction.
 */
final class Ledger implements AutoCloseable {
    private final FileChannel file;
    private final Set<String> given = new HashSet<>();

    Ledger(Path path) throws IOException {
        byte[] bytes = Files.exists(path) ? Files.readAllBytes(path) : new byte[0];
        int end = bytes.length;
        while (end > 0 && bytes[end - 1] != '\n') end--;
        for (String line : new String(bytes, 0, end, StandardCharsets.UTF_8).split("\n")) {
            String[] fields = line.split("\t", -1);
            if (fields.length == 4) given.add(fields[0]);
        }
        file = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        if (end < bytes.length) {
            // A last line without its newline was torn by a crash while being written: it was
            // never answered 2xx, so the bridge sends that item again. Cut it off, or the next
            // line would be glued to it.
            file.truncate(end);
            file.force(true);
        }
        file.position(end);
        Path dir = path.toAbsolutePath().getParent();
        // A new file's name is durable only once its directory is synced too.
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException ignored) {
            // Some platforms cannot open a directory; the file's own sync still holds its data.
        }
    }

    /** True when the item with this deliveryId was given already. */
    synchronized boolean has(String deliveryId) {
        return given.contains(deliveryId);
    }

    /** Records a given item durably; returns false (and writes nothing) when it was given already. */
    synchronized boolean give(String deliveryId, String player, String productId, long quantity) throws IOException {
        if (given.contains(deliveryId)) return false;
        String line = String.join("\t", clean(deliveryId), clean(player), clean(productId), Long.toString(quantity)) + "\n";
        ByteBuffer bytes = ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8));
        while (bytes.hasRemaining()) file.write(bytes);
        file.force(false); // fsync before the 2xx: the bridge forgets the item once we answer
        given.add(deliveryId);
        return true;
    }

    synchronized int size() {
        return given.size();
    }

    @Override
    public synchronized void close() throws IOException {
        file.close();
    }

    /** Tabs and newlines cannot appear in a field of the file. */
    private static String clean(String s) {
        return s.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
    }
}
