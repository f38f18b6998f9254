/// Which model answers: the four inference modes of the Architecture article
/// ("Routing rules"), named as the `--mode` flag spells them.
public enum InferenceMode: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
  /// The on-device model, the cloud when the device cannot answer.
  case preferOnDevice = "prefer-on-device"
  /// The cloud, the on-device model only when offline.
  case preferCloud = "prefer-cloud"
  /// The on-device model or an error.
  case onlyOnDevice = "only-on-device"
  /// The cloud or an error.
  case onlyCloud = "only-cloud"

  /// The flag spelling (`prefer-on-device`).
  public var description: String { rawValue }

  /// Every mode's flag spelling, for help and error messages.
  public static var allNames: String { allCases.map(\.rawValue).joined(separator: "|") }

  /// The mode when `--mode` is not given: hybrid when the cloud can be used,
  /// else on device only, so that a machine without a key never tries the network.
  public static func defaultMode(cloudKeyIsSet: Bool) -> InferenceMode {
    cloudKeyIsSet ? .preferOnDevice : .onlyOnDevice
  }

  /// Whether the mode may use the on-device model.
  public var usesDevice: Bool { self != .onlyCloud }

  /// Whether the mode may use the cloud model.
  public var usesCloud: Bool { self != .onlyOnDevice }
}
