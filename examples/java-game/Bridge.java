import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * The bridge's HTTP API as the game calls it (docs/bridge.md): every request carries the
 * bridge's token; bodies are JSON. Three calls make a game: join, leave, /claim.
 */
final class Bridge {
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;
    private final String token;

    Bridge(String base, String token) {
        this.base = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
        this.token = token;
    }

    /** A player joined the game: the bridge delivers what they bought while they are online. */
    void join(String player) throws IOException, InterruptedException {
        post("/v1/join", "{\"player\":" + Json.quote(player) + "}", Duration.ofSeconds(10));
    }

    /** A player left: nothing more is given to them until they join again. */
    void leave(String player) throws IOException, InterruptedException {
        post("/v1/leave", "{\"player\":" + Json.quote(player) + "}", Duration.ofSeconds(10));
    }

    /**
     * The player typed /claim: resolves with the text to show them. The bridge answers once
     * the delivery is done (items arrive on the webhook first), so allow about 30 s: a
     * purchase no preview has seen yet waits one service window (10 s) before its claim.
     */
    String claim(String player) throws IOException, InterruptedException {
        Object answer = post("/v1/claim", "{\"player\":" + Json.quote(player) + "}", Duration.ofSeconds(60));
        String message = Json.string(answer, "message");
        return message != null ? message : "Your purchases are on their way.";
    }

    /**
     * The player typed a vote command: spends their vote points on {@code amount} units of a
     * reward (a number, or "all"); the rows arrive on the webhook as {@code kind: "vote"}.
     * Resolves with the text to show them.
     */
    String vote(String player, String reward, String amount) throws IOException, InterruptedException {
        String units = amount.equals("all") ? "\"all\"" : Long.toString(Long.parseLong(amount));
        String body = "{\"player\":" + Json.quote(player) + ",\"reward\":" + Json.quote(reward) + ",\"amount\":" + units + "}";
        String message = Json.string(post("/v1/vote", body, Duration.ofSeconds(60)), "message");
        return message != null ? message : "Your vote rewards are on their way.";
    }

    /** True once the bridge answers its health check with 200. */
    boolean healthy() throws InterruptedException {
        try {
            HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/v1/health"))
                .header("Authorization", "Bearer " + token)
                .timeout(Duration.ofSeconds(5))
                .GET()
                .build();
            return http.send(request, HttpResponse.BodyHandlers.ofString()).statusCode() == 200;
        } catch (IOException notYet) {
            return false;
        }
    }

    private Object post(String path, String body, Duration timeout) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + path))
            .header("Authorization", "Bearer " + token)
            .header("Content-Type", "application/json")
            .timeout(timeout)
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        Object json;
        try {
            json = Json.parse(response.body());
        } catch (IllegalArgumentException notJson) {
            json = null;
        }
        if (response.statusCode() != 200) {
            // {"error":{"code":"…","message":"…","field":"player"}}
            Object error = json instanceof java.util.Map<?, ?> map ? map.get("error") : null;
            String message = Json.string(error, "message");
            throw new IOException("bridge " + path + ": HTTP " + response.statusCode() + (message != null ? ": " + message : ""));
        }
        return json;
    }
}
