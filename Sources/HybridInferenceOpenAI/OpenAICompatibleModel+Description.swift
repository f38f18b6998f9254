import HybridInferenceCore
import HybridInferenceRemote

extension OpenAICompatibleModel: CustomStringConvertible, CustomDebugStringConvertible,
  CustomReflectable
{
  /// Names the model and its server; says whether a key is set, never the
  /// key (nor any credentials in the base URL).
  public var description: String {
    shell.description(of: "OpenAICompatibleModel", server: shell.displayedBaseURL, absentKey: "none")
  }

  /// The description plus the request options; still no key.
  public var debugDescription: String {
    shell.debugDescription(of: "OpenAICompatibleModel", absentKey: "none")
  }

  /// What `dump` and debuggers show: the settings, with the key redacted.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: shell.mirrorChildren(trailing: ["requiresAPIKey": requiresAPIKey], absentKey: "none"),
      displayStyle: .struct)
  }
}
