// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import "./DevnetERC20.sol";

/// @notice A token whose name() and symbol() return bytes32 instead of string, as MKR (Maker)
/// and SAI do on mainnet: a string-typed decoder fails on them.
contract Bytes32MetadataToken is DevnetERC20 {
    bytes32 public name;
    bytes32 public symbol;
    uint8 public immutable decimals;

    constructor(bytes32 name_, bytes32 symbol_, uint8 decimals_) {
        name = name_;
        symbol = symbol_;
        decimals = decimals_;
    }
}
