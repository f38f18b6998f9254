import Foundation

/// Settings a benchmark run reads from its environment.
enum BenchEnvironment {
  /// The comma-separated integers of `name` (e.g. `HI_DEPTHS=3000`); nil
  /// when it is unset or holds none.
  static func integers(_ name: String) -> [Int]? {
    let given = ProcessInfo.processInfo.environment[name]?.split(separator: ",").compactMap { Int($0) }
    return given.flatMap { $0.isEmpty ? nil : $0 }
  }
}
