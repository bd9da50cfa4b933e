// What the guide's C# snippet (docs/bridge.md) uses of System.Text.Json and System.Net.Http.Json,
// with .NET 6's signatures, for mono's mcs, which has neither assembly: the snippet is compiled
// against mono's own HttpClient and these declarations. The bodies are never run.
using System.Threading;
using System.Threading.Tasks;

namespace System.Text.Json
{
    public sealed class JsonSerializerOptions { }

    public struct JsonElement
    {
        public JsonElement GetProperty(string propertyName) => throw new NotImplementedException();
        public string GetString() => throw new NotImplementedException();
    }
}

namespace System.Net.Http.Json
{
    using System.Text.Json;

    public static class HttpClientJsonExtensions
    {
        public static Task<HttpResponseMessage> PostAsJsonAsync<TValue>(this HttpClient client, string requestUri, TValue value, JsonSerializerOptions options = null, CancellationToken cancellationToken = default(CancellationToken)) => throw new NotImplementedException();
    }

    public static class HttpContentJsonExtensions
    {
        public static Task<T> ReadFromJsonAsync<T>(this HttpContent content, JsonSerializerOptions options = null, CancellationToken cancellationToken = default(CancellationToken)) => throw new NotImplementedException();
    }
}
