// Hardhat configuration of the devnet node (see node.ts). The project is an ES module package,
// so Hardhat 2 can only load its configuration from a .cjs file. The values come from the
// launcher through TOKENMARKET_DEVNET_NODE (JSON), so one static file serves every port, chain
// id and genesis date.
const path = require("node:path");

const options = JSON.parse(process.env.TOKENMARKET_DEVNET_NODE ?? "{}");
const cacheDir = path.join(__dirname, "../../node_modules/.cache/tokenmarket");

module.exports = {
  // Hardhat never compiles anything here, but it resolves these folders: keep them out of src/.
  paths: {
    cache: path.join(cacheDir, "hardhat-cache"),
    artifacts: path.join(cacheDir, "hardhat-artifacts"),
  },
  networks: {
    hardhat: {
      chainId: options.chainId,
      initialDate: options.initialDate,
      accounts: {
        mnemonic: options.mnemonic,
        count: options.accountCount,
        accountsBalance: options.accountBalanceWei,
      },
      // Live blocks may come faster than one a second (blockIntervalMs below 1000).
      allowBlocksWithSameTimestamp: true,
      // With a base fee of 0 the gas price is a pure priority: the mempool orders a block's
      // transactions by it, and the simulator gives each transaction of a block its rank.
      initialBaseFeePerGas: 0,
      blockGasLimit: options.blockGasLimit,
      mining: { auto: true, interval: 0, mempool: { order: "priority" } },
      loggingEnabled: false,
    },
  },
};
