// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import "./DevnetERC20.sol";

/// @notice A mintable ERC-20 with the usual string metadata and chosen decimals.
contract DevnetToken is DevnetERC20 {
    string public name;
    string public symbol;
    uint8 public immutable decimals;

    constructor(string memory name_, string memory symbol_, uint8 decimals_) {
        name = name_;
        symbol = symbol_;
        decimals = decimals_;
    }
}
