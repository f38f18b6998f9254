import HybridInferenceCore
import HybridInferenceRemote

extension CloudGeminiModel: CustomStringConvertible, CustomDebugStringConvertible,
  CustomReflectable
{
  /// Names the model and its server; says whether a key is set, never the
  /// key (nor any credentials in the base URL).
  public var description: String {
    shell.description(
      of: "CloudGeminiModel", server: "\(shell.displayedBaseURL)/\(apiVersion)", absentKey: "missing")
  }

  /// The description plus the request options; still no key.
  public var debugDescription: String {
    shell.debugDescription(of: "CloudGeminiModel", fields: ["apiVersion": apiVersion], absentKey: "missing")
  }

  /// What `dump` and debuggers show: the settings, with the key redacted, so
  /// a crash report or a debug print of a value holding the model stays safe.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: shell.mirrorChildren(
        fields: ["apiVersion": apiVersion], trailing: ["safetySettings": safetySettings as Any],
        absentKey: "missing"),
      displayStyle: .struct)
  }
}
