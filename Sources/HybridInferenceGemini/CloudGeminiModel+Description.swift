import HybridInferenceCore
import HybridInferenceRemote

extension CloudGeminiModel: CustomStringConvertible, CustomDebugStringConvertible,
  CustomReflectable
{
  /// Names the model and its server; says whether a key is set, never the
  /// key (nor any credentials in the base URL).
  public var description: String {
    "CloudGeminiModel(\(name), \(RemoteURL.display(baseURL))/\(apiVersion), "
      + "API key \(apiKey == nil ? "missing" : "set"))"
  }

  /// The description plus the request options; still no key.
  public var debugDescription: String {
    "CloudGeminiModel(name: \(name), baseURL: \(RemoteURL.display(baseURL)), "
      + "apiVersion: \(apiVersion), apiKey: \(apiKey == nil ? "<missing>" : "<redacted>"), "
      + "timeout: \(requestOptions.timeout), connectTimeout: \(requestOptions.connectTimeout), "
      + "maxAttempts: \(requestOptions.retryPolicy.maxAttempts))"
  }

  /// What `dump` and debuggers show: the settings, with the key redacted, so
  /// a crash report or a debug print of a value holding the model stays safe.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "name": name,
        "baseURL": RemoteURL.display(baseURL),
        "apiVersion": apiVersion,
        "apiKey": apiKey == nil ? "<missing>" : "<redacted>",
        "requestOptions": requestOptions,
        "safetySettings": safetySettings as Any,
      ],
      displayStyle: .struct)
  }
}
