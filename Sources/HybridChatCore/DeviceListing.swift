import HybridInferenceLlama

/// What `hybrid-chat --devices` prints: the devices the linked llama.cpp
/// can compute on (`LocalSystemModel.computeDevices`), one a line.
public enum DeviceListing {
  /// One line a device: name, kind, description, total and free memory;
  /// a line saying so when the registry is empty.
  public static func text(for devices: [ComputeDevice]) -> String {
    guard !devices.isEmpty else { return "llama.cpp lists no compute device\n" }
    let nameWidth = devices.map(\.name.count).max() ?? 0
    let kindWidth = devices.map(\.kind.description.count).max() ?? 0
    return devices.map { device in
      let memory = device.memoryBytes.map { total in
        ByteCount.text(Int64(total)) + (device.freeMemoryBytes.map { ", \(ByteCount.text(Int64($0))) free" } ?? "")
      }
      return [
        pad(device.name, nameWidth), pad(device.kind.description, kindWidth), device.description,
        memory ?? "memory not reported",
      ].joined(separator: "  ")
    }.joined(separator: "\n") + "\n"
  }

  private static func pad(_ text: String, _ width: Int) -> String {
    text + String(repeating: " ", count: max(0, width - text.count))
  }
}
