import type { Command } from 'commander';

/**
 * `--help` examples, one entry per command path. Kept apart from the command definitions so
 * they read as one piece of documentation; program.spec.ts fails when a command has none.
 */
export const EXAMPLES: Record<string, readonly string[]> = {
  '': [
    'kfleet login https://fleet.example.com --token "$TOKEN" --context prod',
    'kfleet clusters list -l env=prod',
    'kfleet rollouts start -l env=staging --enable --wait',
  ],
  login: [
    'kfleet login https://fleet.example.com --token "$TOKEN"',
    'vault read -field=token secret/kfleet | kfleet login https://fleet.example.com --context prod',
    'kfleet login https://fleet.example.com --oidc   # then open the URL it prints in a browser',
  ],
  history: [
    'kfleet history',
    'kfleet history --since 7d',
    'kfleet history -o json | jq "map(select(.degraded > 0)) | length"',
  ],
  whoami: ['kfleet whoami', 'kfleet whoami -o json | jq -r .expiresAt'],
  config: ['kfleet config get-contexts', 'kfleet config use-context prod'],
  'config get-contexts': ['kfleet config get-contexts', 'kfleet config get-contexts -o name'],
  'config use-context': ['kfleet config use-context staging'],
  'config current-context': ['kfleet config current-context'],
  'config delete-context': ['kfleet config delete-context old-fleet'],
  clusters: ['kfleet clusters list', 'kfleet clusters get ocp-east-1'],
  migrate: ['kfleet migrate plan ocp-east-1', 'kfleet migrate apply ocp-east-1'],
  'migrate plan': [
    'kfleet migrate plan ocp-east-1',
    'kfleet migrate plan ocp-east-1 -o wide   # with the MachineSets each NodePool replaces',
    'kfleet migrate plan ocp-east-1 -o json | jq .plan.notExpressible',
  ],
  'migrate apply': [
    'kfleet migrate apply ocp-east-1   # NodePools + MIGRATE: both autoscalers run',
    'kfleet karpenter enable ocp-east-1 --cas disable   # later, the second step',
  ],
  plan: [
    'kfleet plan ocp-east-1 -f general-nodepool.yaml   # what the NodePool change would do, field by field',
    'kfleet plan -l env=prod --cas disable -o json',
    'kfleet plan apply 3f2b6c1e-8a4d-4c1b-9e2f-0a1b2c3d4e5f',
  ],
  'plan show': ['kfleet plan show 3f2b6c1e-8a4d-4c1b-9e2f-0a1b2c3d4e5f -o wide'],
  'plan apply': ['kfleet plan apply 3f2b6c1e-8a4d-4c1b-9e2f-0a1b2c3d4e5f'],
  'clusters drift': ['kfleet clusters drift', 'kfleet clusters drift -l env=prod -o json'],
  'clusters drift-policy': [
    'kfleet clusters drift-policy ocp-east-1 REPORT   # leave hand edits, flag them',
    'kfleet clusters drift-policy ocp-east-1 CORRECT  # put them back at once (the default)',
  ],
  'clusters list': [
    "kfleet clusters list -l 'env=prod,region in (us-east-1)' --out-of-sync",
    'kfleet clusters list --condition Degraded=True -o wide',
    'kfleet clusters list --watch',
    'kfleet clusters list --stale -o name',
  ],
  'clusters get': [
    'kfleet clusters get ocp-east-1',
    'kfleet clusters get ocp-east-1 --show-sources  # each field and the profile or override that set it',
    'kfleet clusters get ocp-east-1 -o json | jq .status.conditions',
    'kfleet clusters get ocp-east-1 --watch -o table',
  ],
  'clusters reset': [
    "kfleet clusters reset ocp-east-1 logLevel  # the profiles' logLevel applies again",
    'kfleet clusters reset ocp-east-1 nodePools.general',
    'kfleet clusters reset ocp-east-1 --all   # every override at once: the profiles apply',
  ],
  profiles: [
    'kfleet profiles list',
    'kfleet profiles create prod-base -l env=prod --priority 10 -f prod-base.yaml',
  ],
  'profiles list': ['kfleet profiles list', 'kfleet profiles list -o yaml'],
  'profiles get': [
    'kfleet profiles get prod-base',
    'kfleet profiles get prod-base -o json | jq .spec',
  ],
  'profiles create': [
    'kfleet profiles create prod-base -l env=prod --priority 10 -f prod-base.yaml',
    "kfleet profiles create gpu -l 'gpu in (true)' --priority 20 -f gpu.yaml --waves 1,50%,100%",
  ],
  'profiles update': [
    'kfleet profiles update prod-base -f prod-base.yaml --waves 1,25%,100%',
    "kfleet profiles update prod-base -l 'env=prod,region!=eu-west-1'",
  ],
  'profiles delete': ['kfleet profiles delete prod-base --yes'],
  apply: [
    'kfleet apply -f fleet/ --dry-run   # check every document and print the plan; write nothing',
    'kfleet apply -f fleet/profiles -f fleet/clusters --waves 1,50%,100%',
    'kfleet apply -f fleet/ --prune   # also delete what the files no longer hold (kinds they hold)',
  ],
  export: [
    'kfleet export -o fleet/   # profiles/<name>.yaml and clusters/<name>.yaml',
    'kfleet export > fleet.yaml',
  ],
  'clusters register': [
    'kfleet clusters register ocp-east-1 --platform AWS --region us-east-1 --label env=prod --manifest-out ocp-east-1.yaml',
  ],
  'clusters rotate-credentials': [
    'kfleet clusters rotate-credentials ocp-east-1 --manifest-out ocp-east-1.yaml',
    'kfleet clusters rotate-credentials ocp-east-1 --grace 0 --manifest-out ocp-east-1.yaml',
  ],
  'clusters deregister': ['kfleet clusters deregister ocp-old-3 --yes'],
  'clusters label': ['kfleet clusters label ocp-east-1 tier=gold team-'],
  'clusters pause': ['kfleet clusters pause ocp-east-1'],
  'clusters resume': ['kfleet clusters resume ocp-east-1'],
  'clusters reconcile': ['kfleet clusters reconcile ocp-east-1'],
  'clusters history': [
    'kfleet clusters history ocp-east-1',
    'kfleet clusters history ocp-east-1 --since 7d --step 1h',
    'kfleet clusters history ocp-east-1 --since 1h -o json',
  ],
  'clusters csr': [
    'kfleet clusters csr ocp-east-1',
    'kfleet clusters csr ocp-east-1 -o wide --limit 200',
  ],
  'clusters activity': [
    'kfleet clusters activity ocp-east-1',
    'kfleet clusters activity ocp-east-1 -o yaml',
  ],
  'clusters runs': ['kfleet clusters runs ocp-east-1 --limit 10'],
  karpenter: ['kfleet karpenter enable ocp-east-1 --cas disable --wait'],
  'karpenter enable': [
    'kfleet karpenter enable ocp-east-1 --cas disable --feature-gate Drift=true',
    'kfleet karpenter enable ocp-east-1 --wait --timeout 10m',
  ],
  'karpenter disable': ['kfleet karpenter disable ocp-east-1 --cas keep --wait'],
  nodepools: ['kfleet nodepools list ocp-east-1'],
  'nodepools apply': [
    'kfleet nodepools apply ocp-east-1 -f nodepool.yaml',
    'kfleet nodepools apply ocp-east-1 -f spec.yaml --name general --expected-generation 4',
  ],
  'nodepools delete': ['kfleet nodepools delete ocp-east-1 general'],
  'nodepools list': [
    'kfleet nodepools list ocp-east-1',
    'kfleet nodepools list ocp-east-1 -o yaml',
  ],
  nodeclass: [
    'kfleet nodeclass show ocp-east-1',
    'kfleet nodeclass set ocp-east-1 --tag team=core',
  ],
  'nodeclass show': [
    'kfleet nodeclass show ocp-east-1',
    'kfleet nodeclass show ocp-east-1 -o json',
  ],
  'nodeclass set': [
    'kfleet nodeclass set ocp-east-1 -f overrides.yaml',
    'kfleet nodeclass set ocp-east-1 --tag cost-center=1234',
    'kfleet nodeclass set ocp-east-1 --clear',
  ],
  summary: ['kfleet summary', 'kfleet summary -o json', 'kfleet summary --watch'],
  tokens: ['kfleet tokens list'],
  'tokens create': [
    'kfleet tokens create ci --role operator --selector env=staging --expires-in 30d',
  ],
  'tokens list': ['kfleet tokens list', 'kfleet tokens list -o json'],
  'tokens revoke': ['kfleet tokens revoke 3f0c1c9e-6d4a-4d8b-9a57-0e2c1b1f0a11'],
  rollouts: ['kfleet rollouts list --state RUNNING', 'kfleet rollouts watch <id>'],
  'rollouts start': [
    'kfleet rollouts start -l env=prod --enable --cas disable --waves 1,10%,100%',
    'kfleet rollouts start -l env=staging --log-level debug --wait --timeout 1h',
    'kfleet rollouts start --plan <plan-id> --waves 1,10%,100% --wait',
  ],
  'rollouts list': ['kfleet rollouts list', 'kfleet rollouts list --state FAILED -o name'],
  'rollouts get': ['kfleet rollouts get <id>', 'kfleet rollouts get <id> -o json'],
  'rollouts watch': ['kfleet rollouts watch <id>', 'kfleet rollouts watch <id> --timeout 30m'],
  'rollouts pause': ['kfleet rollouts pause <id>'],
  'rollouts resume': ['kfleet rollouts resume <id>'],
  'rollouts approve': [
    'kfleet rollouts approve <id>  # the stage it waits at (WAITING_APPROVAL)',
    'kfleet rollouts approve <id> --stage 0',
  ],
  strategies: ['kfleet strategies list', 'kfleet strategies create prod-gated -f prod-gated.yaml'],
  'strategies list': ['kfleet strategies list', 'kfleet strategies list -o yaml'],
  'strategies get': ['kfleet strategies get prod-gated -o yaml'],
  'strategies create': [
    'kfleet strategies create prod-gated -f prod-gated.yaml  # stages: [{selector: canary=true, approval: true}, {percent: 100}]',
  ],
  'strategies update': ['kfleet strategies update prod-gated -f prod-gated.yaml'],
  'strategies delete': ['kfleet strategies delete prod-gated --yes'],
  'rollouts abort': ['kfleet rollouts abort <id> --reason "bad AMI"'],
  'dead-letters': ['kfleet dead-letters list'],
  'dead-letters list': [
    'kfleet dead-letters list',
    'kfleet dead-letters list --queue reconcile -o json',
  ],
  'dead-letters redrive': ['kfleet dead-letters redrive <id>', 'kfleet dead-letters redrive --all'],
  version: ['kfleet version', 'kfleet version --client -o json'],
  completion: [
    'source <(kfleet completion bash)    # in ~/.bashrc',
    'source <(kfleet completion zsh)     # in ~/.zshrc',
  ],
};

/** The path of a command below the program: "clusters list". */
export const commandPath = (cmd: Command): string => {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
};

/** Every command of the tree, the program first; hidden ones are left out. */
export function everyCommand(program: Command): Command[] {
  const out: Command[] = [];
  const walk = (cmd: Command) => {
    if ((cmd as Command & { _hidden?: boolean })._hidden) return;
    out.push(cmd);
    cmd.commands.forEach(walk);
  };
  walk(program);
  return out;
}

export function addExamples(program: Command): void {
  for (const cmd of everyCommand(program)) {
    const examples = EXAMPLES[commandPath(cmd)];
    if (examples)
      cmd.addHelpText('after', `\nExamples:\n${examples.map((e) => `  ${e}`).join('\n')}\n`);
  }
}
