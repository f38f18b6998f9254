import HybridInferenceCore
import HybridInferenceRemote

extension OpenAICompatibleModel: CustomStringConvertible, CustomDebugStringConvertible,
  CustomReflectable
{
  /// Names the model and its server; says whether a key is set, never the
  /// key (nor any credentials in the base URL).
  public var description: String {
    "OpenAICompatibleModel(\(name), \(RemoteURL.display(baseURL)), "
      + "API key \(apiKey == nil ? "none" : "set"))"
  }

  /// The description plus the request options; still no key.
  public var debugDescription: String {
    "OpenAICompatibleModel(name: \(name), baseURL: \(RemoteURL.display(baseURL)), "
      + "apiKey: \(apiKey == nil ? "<none>" : "<redacted>"), "
      + "timeout: \(requestOptions.timeout), connectTimeout: \(requestOptions.connectTimeout), "
      + "maxAttempts: \(requestOptions.retryPolicy.maxAttempts))"
  }

  /// What `dump` and debuggers show: the settings, with the key redacted.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "name": name,
        "baseURL": RemoteURL.display(baseURL),
        "apiKey": apiKey == nil ? "<none>" : "<redacted>",
        "requestOptions": requestOptions,
        "requiresAPIKey": requiresAPIKey,
      ],
      displayStyle: .struct)
  }
}
