import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A game server in Java (JDK 17, nothing else) delivered by {@code teamgames bridge}:
 * it tells the bridge who joins and leaves, forwards /claim and shows the player the
 * bridge's text, and receives each purchase on its webhook, given exactly once by
 * deliveryId (see {@link Ledger}). The guide is docs/bridge.md.
 *
 * <pre>
 * javac -d out examples/java-game/*.java
 * TEAMGAMES_BRIDGE_TOKEN=… java -cp out JavaGame --bridge http://127.0.0.1:8787 \
 *     --webhook-port 9000 --ledger given-items.tsv --players Steve,Alex --claim Steve --expect 3
 * </pre>
 *
 * The bridge's config names the webhook: {@code "give": {"webhook": {"url": "http://127.0.0.1:9000/teamgames"}}}.
 * The console (stdin) takes {@code join <player>}, {@code leave <player>}, {@code claim <player>},
 * {@code vote <player> <reward> <amount|all>} and {@code stop}. With {@code --expect N} the program prints "all N items given" once
 * its ledger holds N items, and exits 0 at {@code stop} (or end of input) when it does,
 * 1 when not (or after {@code --timeout-ms}, default 120000, without them).
 */
public final class JavaGame {
    private static final int MAX_BODY = 64 * 1024;

    private final byte[] expectedAuthorization;
    private final Ledger ledger;
    private final Set<String> online = ConcurrentHashMap.newKeySet();
    private final AtomicInteger duplicates = new AtomicInteger();
    private final AtomicInteger refused = new AtomicInteger();
    private final AtomicInteger failures = new AtomicInteger();
    private final int expect;
    private final CountDownLatch allGiven = new CountDownLatch(1);

    private JavaGame(String token, Ledger ledger, int expect) {
        this.expectedAuthorization = ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
        this.ledger = ledger;
        this.expect = expect;
        if (expect > 0 && ledger.size() >= expect) allGiven.countDown();
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = options(args);
        String token = token();
        String bridgeUrl = options.getOrDefault("bridge", System.getenv().getOrDefault("TEAMGAMES_BRIDGE_URL", "http://127.0.0.1:8787"));
        int port = Integer.parseInt(options.getOrDefault("webhook-port", "9000"));
        int expect = Integer.parseInt(options.getOrDefault("expect", "0"));
        long timeoutMs = Long.parseLong(options.getOrDefault("timeout-ms", "120000"));
        List<String> players = options.containsKey("players") ? List.of(options.get("players").split(",")) : List.of();

        try (Ledger ledger = new Ledger(Path.of(options.getOrDefault("ledger", "given-items.tsv")))) {
            JavaGame game = new JavaGame(token, ledger, expect);
            HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
            server.createContext("/teamgames", game::webhook);
            server.start();
            say("webhook listening on http://127.0.0.1:" + server.getAddress().getPort() + "/teamgames");

            Bridge bridge = new Bridge(bridgeUrl, token);
            int code = game.play(bridge, players, options.get("claim"), timeoutMs);
            server.stop(0);
            System.exit(code);
        }
    }

    /** Joins the players, types /claim, waits for the expected items, then serves the console until stop. */
    private int play(Bridge bridge, List<String> players, String claimer, long timeoutMs) throws Exception {
        long deadline = System.currentTimeMillis() + 30_000;
        while (!bridge.healthy()) {
            if (System.currentTimeMillis() > deadline) {
                say("the bridge did not answer its health check within 30 s");
                return 1;
            }
            Thread.sleep(200);
        }
        say("bridge is up");
        for (String player : players) command(bridge, "join " + player);
        if (claimer != null) command(bridge, "claim " + claimer);
        if (expect > 0) {
            if (!allGiven.await(timeoutMs, TimeUnit.MILLISECONDS)) {
                say("only " + ledger.size() + " of " + expect + " items arrived within " + timeoutMs + " ms");
                return 1;
            }
            say("all " + expect + " items given");
        }
        BufferedReader console = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = console.readLine()) != null && !line.trim().equals("stop"); ) {
            if (!line.isBlank()) command(bridge, line.trim());
        }
        for (String player : List.copyOf(online)) command(bridge, "leave " + player);
        say("stopped: given=" + ledger.size() + " duplicates=" + duplicates.get() + " refused=" + refused.get() + " failures=" + failures.get());
        return failures.get() == 0 && ledger.size() >= expect ? 0 : 1;
    }

    /** One console command: join, leave or claim a player, or spend a player's vote points. */
    private void command(Bridge bridge, String line) throws InterruptedException {
        String[] words = line.split("\\s+", 2);
        String player = words.length == 2 ? words[1] : ""; // a name may hold spaces
        try {
            switch (words[0]) {
                case "join" -> {
                    online.add(player);
                    bridge.join(player);
                    say(player + " joined");
                }
                case "leave" -> {
                    online.remove(player);
                    bridge.leave(player);
                    say(player + " left");
                }
                case "claim" -> {
                    say(player + " typed /claim");
                    System.out.println("[chat] to " + player + ": " + bridge.claim(player));
                }
                case "vote" -> {
                    int amountAt = player.lastIndexOf(' ');
                    int rewardAt = amountAt < 0 ? -1 : player.lastIndexOf(' ', amountAt - 1);
                    if (rewardAt < 1) throw new IllegalArgumentException("vote <player> <reward> <amount|all>");
                    String voter = player.substring(0, rewardAt);
                    String reward = player.substring(rewardAt + 1, amountAt);
                    String amount = player.substring(amountAt + 1);
                    say(voter + " typed /vote " + reward + " " + amount);
                    System.out.println("[chat] to " + voter + ": " + bridge.vote(voter, reward, amount));
                }
                default -> say("console: join <player> | leave <player> | claim <player> | vote <player> <reward> <amount|all> | stop");
            }
        } catch (IOException e) {
            failures.incrementAndGet();
            say(line + " failed: " + e.getMessage());
        } catch (IllegalArgumentException e) {
            say("console: " + e.getMessage());
        }
    }

    /** POST /teamgames from the bridge: one item, given once per deliveryId. */
    private void webhook(HttpExchange exchange) throws IOException {
        try (exchange) {
            if (!exchange.getRequestMethod().equals("POST")) {
                answer(exchange, 405, "method");
                return;
            }
            String authorization = exchange.getRequestHeaders().getFirst("Authorization");
            // Constant time, so the token cannot be guessed byte by byte from our answer times.
            if (authorization == null || !MessageDigest.isEqual(authorization.getBytes(StandardCharsets.UTF_8), expectedAuthorization)) {
                refused.incrementAndGet();
                say("webhook refused: missing or wrong token");
                answer(exchange, 401, "token");
                return;
            }
            byte[] body = read(exchange.getRequestBody());
            if (body == null) {
                answer(exchange, 413, "too large");
                return;
            }
            Object item;
            try {
                item = Json.parse(new String(body, StandardCharsets.UTF_8));
            } catch (IllegalArgumentException e) {
                say("webhook refused: " + e.getMessage());
                answer(exchange, 400, "not JSON");
                return;
            }
            String kind = Json.string(item, "kind");
            String deliveryId = Json.string(item, "deliveryId");
            String player = Json.string(item, "player");
            String what = "vote".equals(kind) ? Json.string(item, "rewardId") : Json.string(item, "productId");
            Double quantity = Json.number(item, "vote".equals(kind) ? "amount" : "quantity");
            if (!("purchase".equals(kind) || "vote".equals(kind)) || deliveryId == null || !deliveryId.matches("[\\x21-\\x7e]{1,256}")
                || player == null || what == null || quantity == null || quantity < 1 || quantity != Math.rint(quantity)) {
                say("webhook refused: not an item this game knows");
                answer(exchange, 400, "item");
                return;
            }
            if (ledger.has(deliveryId)) {
                // Sent again (the bridge did not hear our 2xx): already given, say so, give nothing.
                duplicates.incrementAndGet();
                say("already given " + deliveryId + ": answered 2xx, not given again");
                answer(exchange, 200, null);
                return;
            }
            if (!online.contains(player)) {
                say("not given now: " + player + " is offline (the bridge keeps " + deliveryId + " for their next join)");
                answer(exchange, 409, "offline");
                return;
            }
            // Give the item and record its deliveryId: one durable append, before the 2xx.
            ledger.give(deliveryId, player, what, quantity.longValue());
            say("give " + player + " " + kind + " " + what + " x" + quantity.longValue() + " (" + deliveryId + ")");
            if (expect > 0 && ledger.size() >= expect) allGiven.countDown();
            answer(exchange, 200, null);
        } catch (IOException e) {
            say("webhook failed: " + e.getMessage()); // no 2xx: the bridge sends the item again
            throw e;
        }
    }

    private static void answer(HttpExchange exchange, int status, String error) throws IOException {
        byte[] body = (error == null ? "{\"ok\":true}" : "{\"ok\":false,\"error\":" + Json.quote(error) + "}").getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    /** The body, or null when longer than MAX_BODY. */
    private static byte[] read(InputStream in) throws IOException {
        byte[] body = in.readNBytes(MAX_BODY + 1);
        return body.length > MAX_BODY ? null : body;
    }

    /** The bridge's token, from TEAMGAMES_BRIDGE_TOKEN or the file TEAMGAMES_BRIDGE_TOKEN_FILE names: never an argument, which `ps` shows. */
    private static String token() throws IOException {
        String token = System.getenv("TEAMGAMES_BRIDGE_TOKEN");
        String file = System.getenv("TEAMGAMES_BRIDGE_TOKEN_FILE");
        if (token == null && file != null) token = Files.readString(Path.of(file), StandardCharsets.UTF_8).strip();
        if (token == null || token.isEmpty()) {
            System.err.println("JavaGame: set TEAMGAMES_BRIDGE_TOKEN or TEAMGAMES_BRIDGE_TOKEN_FILE (the bridge's token)");
            System.exit(2);
        }
        return token;
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> options = new java.util.HashMap<>();
        List<String> known = new ArrayList<>(List.of("bridge", "webhook-port", "ledger", "players", "claim", "expect", "timeout-ms"));
        for (int i = 0; i < args.length; i += 2) {
            String name = args[i].startsWith("--") ? args[i].substring(2) : "";
            if (!known.contains(name) || i + 1 >= args.length) {
                System.err.println("JavaGame: unknown option or missing value: " + args[i] + " (options: --" + String.join(" --", known) + ")");
                System.exit(2);
            }
            options.put(name, args[i + 1]);
        }
        return options;
    }

    private static void say(String text) {
        System.out.println("[game] " + text);
    }
}
